package io.lockstep.test;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@RedisTest
class RedisExtensionTests {

	@Test
	void resolvesASharedStandaloneNode(RedisNode redis) {
		assertThat(redis.call("PING")).isEqualTo("PONG");
		assertThat(redis.host()).isEqualTo("127.0.0.1");
	}

	@Test
	void resolvesAFixtureScopedToTheTest(RedisFixture fixture, RedisNode shared) {
		RedisNode own = fixture.standalone();
		assertThat(own.port()).isNotEqualTo(shared.port());
		assertThat(own.call("SET", "a", "b")).isEqualTo("OK");
	}

}

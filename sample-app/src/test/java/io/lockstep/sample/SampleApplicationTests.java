package io.lockstep.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest
class SampleApplicationTests {

	@Autowired
	private StringRedisTemplate redis;

	@Autowired
	private Environment environment;

	@Test
	void startsAnEmbeddedRedisWhenNoneIsConfigured() {
		assertThat(this.environment.getProperty("spring.data.redis.host")).isEqualTo("127.0.0.1");
		this.redis.opsForValue().set("sample:ping", "pong");
		assertThat(this.redis.opsForValue().get("sample:ping")).isEqualTo("pong");
	}

}

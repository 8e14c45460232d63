package io.lockstep.test;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The chaos proxy forwards, drops, delays and resets, and leaves no thread behind.
 */
@RedisTest
class ChaosProxyTests {

	@Test
	void passesBlackholesDelaysResetsAndClosesItsThreads(RedisNode redis) throws Exception {
		int threadsBefore = proxyThreads();
		try (ChaosProxy proxy = ChaosProxy.to(redis)) {
			assertThat(call(proxy, Duration.ofSeconds(2), "PING")).isEqualTo("PONG");

			proxy.blackhole();
			assertThatExceptionOfType(SocketTimeoutException.class)
				.isThrownBy(() -> call(proxy, Duration.ofMillis(300), "SET", "dropped", "1"));
			assertThat(proxy.droppedBytes()).isPositive();
			assertThat(redis.call("EXISTS", "dropped")).as("the command never reached Redis").isEqualTo(0L);

			proxy.delay(200);
			long start = System.nanoTime();
			assertThat(call(proxy, Duration.ofSeconds(2), "PING")).isEqualTo("PONG");
			long millis = (System.nanoTime() - start) / 1_000_000;
			assertThat(millis).as("200 ms each way").isBetween(390L, 1_500L);

			proxy.reset();
			assertThatExceptionOfType(IOException.class).isThrownBy(() -> call(proxy, Duration.ofSeconds(2), "PING"));

			proxy.pass();
			assertThat(call(proxy, Duration.ofSeconds(2), "PING")).isEqualTo("PONG");
			System.out.printf("chaos proxy: pass, blackhole (%d bytes dropped), delay 200 ms (PING took %d ms), "
					+ "reset, pass%n", proxy.droppedBytes(), millis);
		}
		assertThat(Eventually.holds(Duration.ofSeconds(5), () -> proxyThreads() == threadsBefore))
			.as("proxy threads left after close")
			.isTrue();
	}

	private static Object call(ChaosProxy proxy, Duration timeout, String... command) throws IOException {
		return Resp.call(proxy.host(), proxy.port(), timeout, command);
	}

	private static int proxyThreads() {
		return (int) Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("chaos-proxy"))
			.count();
	}

}

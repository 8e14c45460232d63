package io.lockstep.test;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

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
		await("proxy threads left after close").atMost(Duration.ofSeconds(5))
			.until(() -> proxyThreads() == threadsBefore);
	}

	@Test
	void holdsTheRepliesOfCommandConnectionsButNotTheMessagesOfSubscribers(RedisNode redis) throws Exception {
		try (ChaosProxy proxy = ChaosProxy.to(redis);
				Socket commands = connect(proxy);
				Socket subscriber = connect(proxy)) {
			InputStream subscribed = new BufferedInputStream(subscriber.getInputStream());
			subscriber.getOutputStream().write(Resp.encode("SUBSCRIBE", "held-test"));
			assertThat(Resp.read(subscribed).toString()).contains("subscribe");
			InputStream replies = new BufferedInputStream(commands.getInputStream());
			commands.getOutputStream().write(Resp.encode("SET", "held", "1"));
			assertThat(Resp.read(replies)).isEqualTo("OK");

			proxy.holdCommandReplies();
			commands.getOutputStream().write(Resp.encode("INCR", "held"));
			await("the command ran in Redis").atMost(Duration.ofSeconds(2))
				.until(() -> "2".equals(redis.call("GET", "held")));
			assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> Resp.read(replies));
			assertThat(proxy.heldReplies()).isPositive();
			redis.call("PUBLISH", "held-test", "passes");
			assertThat(Resp.read(subscribed).toString()).as("the subscriber's message").contains("passes");

			proxy.pass();
			assertThat(Resp.read(replies)).as("the held reply, once passed").isEqualTo(2L);
			System.out.printf("chaos proxy: held %d command reply chunk(s) while a subscriber's message passed%n",
					proxy.heldReplies());
		}
	}

	@Test
	void aResetDropsTheRepliesItHeld(RedisNode redis) throws Exception {
		int rounds = 100;
		int delivered = 0;
		for (int i = 0; i < rounds; i++) {
			try (ChaosProxy proxy = ChaosProxy.to(redis); Socket commands = connect(proxy)) {
				InputStream replies = new BufferedInputStream(commands.getInputStream());
				commands.getOutputStream().write(Resp.encode("SET", "reset-held", "1"));
				assertThat(Resp.read(replies)).isEqualTo("OK");
				proxy.holdCommandReplies();
				commands.getOutputStream().write(Resp.encode("INCR", "reset-held"));
				await("the reply held").atMost(Duration.ofSeconds(5)).until(() -> proxy.heldReplies() > 0);
				proxy.reset();
				try {
					Object reply = Resp.read(replies);
					delivered += (reply != null) ? 1 : 0;
				}
				catch (IOException ex) {
					// reset, closed or timed out: the reply did not pass
				}
			}
		}
		System.out.printf("chaos proxy: %d of %d replies held until a reset passed%n", delivered, rounds);
		assertThat(delivered).isZero();
	}

	private static Socket connect(ChaosProxy proxy) throws IOException {
		Socket socket = new Socket(proxy.host(), proxy.port());
		socket.setSoTimeout(500);
		return socket;
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

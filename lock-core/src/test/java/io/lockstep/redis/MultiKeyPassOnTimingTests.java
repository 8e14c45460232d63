package io.lockstep.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The pass-on of a wake-up by a multi-key waiter, measured over many rounds on whichever
 * server the fixture runs (Redis or Valkey): a waiter for {a, b} is woken first by the
 * release of a, finds b taken and leaves a's queue; the next waiter of a must get a
 * within about a round trip. Each round's commands are recorded with {@code MONITOR}, and
 * the rounds slower than {@value #SLOW_MILLIS} ms print their server-side timeline, so
 * that a slow pass-on shows where its time went.
 */
@RedisTest
class MultiKeyPassOnTimingTests {

	private static final int RUNS = 2;

	private static final int ROUNDS = 5;

	private static final long SLOW_MILLIS = 100;

	/**
	 * The next waiter of a locks a alone: the release hands a to it (queued in storage).
	 */
	@Test
	void theNextWaiterOfOneKeyIsHandedTheKey(RedisFixture fixture) throws Exception {
		rounds(fixture, false);
	}

	/**
	 * The next waiter of a locks {a, c}: nothing hands a to it, only the pass-on of the
	 * first waiter's wake-up wakes it.
	 */
	@Test
	void theNextMultiKeyWaiterIsWokenByThePassOn(RedisFixture fixture) throws Exception {
		rounds(fixture, true);
	}

	private void rounds(RedisFixture fixture, boolean nextIsMultiKey) throws Exception {
		RedisNode redis = fixture.standalone();
		List<Long> gaps = new ArrayList<>();
		List<String> timelines = new ArrayList<>();
		List<String> segments = new ArrayList<>();
		try (Monitor monitor = new Monitor(redis)) {
			for (int run = 0; run < RUNS; run++) {
				run(redis, monitor, run, nextIsMultiKey, gaps, timelines, segments);
			}
		}
		List<Long> sorted = gaps.stream().sorted().toList();
		int rounds = gaps.size();
		System.out.printf(
				"%s, next waiter %s: release of a -> acquired by it, %d runs of %d rounds (fresh clients and templates "
						+ "per run, as a test makes them): %s ms (median %d, max %d, %d of %d >= %d ms)%n",
				redis.server(), nextIsMultiKey ? "of {a, c}" : "of a alone", RUNS, ROUNDS, gaps, sorted.get(rounds / 2),
				sorted.get(rounds - 1), gaps.stream().filter((gap) -> gap >= SLOW_MILLIS).count(), rounds, SLOW_MILLIS);
		if (nextIsMultiKey) {
			System.out.printf("%s, server time per round: release's PUBLISH -> first waiter's attempt (the wake-up) / "
					+ "-> next waiter's attempt (the pass-on), ms: %s%n", redis.server(), segments);
		}
		timelines.forEach(System.out::println);
		assertThat(sorted.get(rounds / 2)).as("median of %s ms", gaps).isLessThan(300);
	}

	private void run(RedisNode redis, Monitor monitor, int run, boolean nextIsMultiKey, List<Long> gaps,
			List<String> timelines, List<String> segments) throws Exception {
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate holder = TestLocks.builder(client).build();
				RedisLockTemplate waiters = TestLocks.builder(client).waitTime(Duration.ofSeconds(10)).build()) {
			for (int i = 0; i < ROUNDS; i++) {
				String round = run + "." + i;
				String a = "pass:" + round + ":a";
				String b = "pass:" + round + ":b";
				String c = "pass:" + round + ":c";
				LockHandle heldA = holder.acquire(a);
				LockHandle heldB = holder.acquire(b);
				AtomicReference<Throwable> failure = new AtomicReference<>();
				Thread first = new Thread(() -> {
					try {
						waiters.acquireAll(List.of(a, b)).close();
					}
					catch (RuntimeException ex) {
						failure.set(ex);
					}
				}, "waiter-both-" + round);
				first.start();
				await().atMost(Duration.ofSeconds(5))
					.until(() -> Probes.engine(waiters).waitersOf("lockstep:" + a) == 1);
				assertThat(TestLocks.parkedFor(first, Duration.ofMillis(100), Duration.ofSeconds(5))).isTrue();
				AtomicLong acquiredAt = new AtomicLong();
				Thread second = new Thread(() -> {
					try (LockHandle lock = nextIsMultiKey ? waiters.acquireAll(List.of(a, c)) : waiters.acquire(a)) {
						acquiredAt.set(System.nanoTime());
					}
					catch (RuntimeException ex) {
						failure.set(ex);
					}
				}, "waiter-a-" + round);
				second.start();
				await().atMost(Duration.ofSeconds(5))
					.until(() -> Probes.engine(waiters).waitersOf("lockstep:" + a) == 2);
				assertThat(TestLocks.parkedFor(second, Duration.ofMillis(100), Duration.ofSeconds(5))).isTrue();
				int mark = monitor.mark("release-" + round);
				long released = System.nanoTime();
				heldA.close();
				second.join(10_000);
				long gap = (acquiredAt.get() - released) / 1_000_000;
				gaps.add(gap);
				heldB.close();
				first.join(10_000);
				assertThat(failure.get()).as("round %d", round).isNull();
				if (nextIsMultiKey) {
					segments.add(monitor.passOn(mark, "pass:" + round + ":"));
				}
				if (gap >= SLOW_MILLIS || (run == 0 && i == 0)) {
					timelines.add("run " + run + " round " + i + " (" + gap + " ms):\n"
							+ monitor.since(mark, "pass:" + round + ":"));
				}
			}
		}
		finally {
			client.shutdown();
		}
	}

	/**
	 * The commands a server runs, as {@code MONITOR} reports them, with its timestamps.
	 */
	private static final class Monitor implements AutoCloseable {

		private final Socket socket;

		private final List<String> lines = new CopyOnWriteArrayList<>();

		private final RedisNode redis;

		Monitor(RedisNode redis) throws IOException {
			this.redis = redis;
			this.socket = new Socket();
			this.socket.connect(new InetSocketAddress(redis.host(), redis.port()), 5000);
			OutputStream out = this.socket.getOutputStream();
			out.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			BufferedReader in = new BufferedReader(
					new InputStreamReader(this.socket.getInputStream(), StandardCharsets.UTF_8));
			Thread reader = new Thread(() -> {
				try {
					for (String line = in.readLine(); line != null; line = in.readLine()) {
						this.lines.add(line);
					}
				}
				catch (IOException ex) {
					// closed
				}
			}, "monitor");
			reader.setDaemon(true);
			reader.start();
		}

		/** Sends a marker through the server and returns its place in the record. */
		int mark(String marker) {
			this.redis.call("ECHO", marker);
			long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
			while (System.nanoTime() < deadline) {
				for (int i = this.lines.size() - 1; i >= 0; i--) {
					if (this.lines.get(i).contains("\"" + marker + "\"")) {
						return i;
					}
				}
				Thread.onSpinWait();
			}
			throw new IllegalStateException("MONITOR did not show " + marker);
		}

		/**
		 * The lines after the mark so far: a copy, since the monitor's reader goes on
		 * adding lines (a view of the list itself fails when it does).
		 */
		private List<String> after(int mark) {
			List<String> lines = List.copyOf(this.lines);
			return lines.subList(mark + 1, lines.size());
		}

		/**
		 * The commands after the mark that name the prefix or are pub/sub, in ms after
		 * the mark (server time).
		 */
		String since(int mark, String prefix) {
			double start = time(this.lines.get(mark));
			StringBuilder timeline = new StringBuilder();
			for (String line : after(mark)) {
				if (line.contains(prefix) || line.contains("SUBSCRIBE") || line.contains("PUBLISH")) {
					String command = line.substring(line.indexOf(']') + 2);
					timeline.append(String.format("  +%7.2f ms %s%n", (time(line) - start) * 1000,
							(command.length() > 160) ? command.substring(0, 160) + "..." : command));
				}
			}
			return timeline.toString();
		}

		/**
		 * From the release's {@code PUBLISH} of a: the first waiter's attempt on {a, b}
		 * (woken by it) and, after that, the next waiter's attempt on {a, c} (woken by
		 * the pass-on), in ms of server time, as {@code "wake/pass-on"}.
		 */
		String passOn(int mark, String prefix) {
			List<String> after = after(mark);
			double released = -1;
			double first = -1;
			for (String line : after) {
				if (released < 0 && line.contains("\"PUBLISH\" \"lockstep:" + prefix + "a\" \"released\"")) {
					released = time(line);
				}
				else if (released >= 0 && first < 0 && line.contains("EVALSHA") && line.contains(prefix + "a\"")
						&& line.contains(prefix + "b\"")) {
					first = time(line);
				}
				else if (first >= 0 && line.contains("EVALSHA") && line.contains(prefix + "a\"")
						&& line.contains(prefix + "c\"")) {
					return String.format("%.1f/%.1f", (first - released) * 1000, (time(line) - first) * 1000);
				}
			}
			return "?";
		}

		private static double time(String line) {
			return Double.parseDouble(line.substring(1, line.indexOf(' ')));
		}

		@Override
		public void close() throws IOException {
			this.socket.close();
		}

	}

}

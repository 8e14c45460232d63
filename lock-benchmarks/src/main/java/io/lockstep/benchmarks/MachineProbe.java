package io.lockstep.benchmarks;

import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;

/**
 * What the machine allows a lock that tells its waiters rather than letting them spin,
 * measured with raw Lettuce once per run, in the runner's JVM after the forks, against
 * the same {@code redis-server}: a round trip (the floor's release EVALSHA) right after
 * another and after a 5 ms idle wait; a notification after a 5 ms idle wait (one
 * connection PUBLISHes, the client's pub/sub connection hears it and unparks a waiting
 * thread: the path of a hand-off told to a parked waiter, without a lock's own work); and
 * how far a 5 ms {@code parkNanos} overshoots.
 *
 * @param hotMicros p50 of a round trip sent right after the previous one
 * @param idleMicros p50 of a round trip sent after a 5 ms park
 * @param notifyMicros p50 from a PUBLISH sent after a 5 ms park to the parked thread it
 * wakes running
 * @param overshootMicros p50 of how much later than asked a 5 ms park returns
 * @param samples samples of each kind
 */
record MachineProbe(double hotMicros, double idleMicros, double notifyMicros, double overshootMicros, int samples) {

	static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private static final int SAMPLES = 600;

	private static final String CHANNEL = "bench:probe";

	static MachineProbe measure(int port) throws InterruptedException {
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
		try (StatefulRedisConnection<String, String> connection = client.connect();
				StatefulRedisPubSubConnection<String, String> subscriber = client.connectPubSub()) {
			RedisCommands<String, String> commands = connection.sync();
			String sha = commands.scriptLoad(FloorContender.script("floor-release.lua"));
			String[] keys = { "bench:probe" };
			String token = UUID.randomUUID().toString();
			Runnable roundTrip = () -> commands.evalsha(sha, ScriptOutputType.INTEGER, keys, token);
			for (int i = 0; i < SAMPLES; i++) {
				roundTrip.run();
			}
			long[] hot = new long[SAMPLES];
			for (int i = 0; i < SAMPLES; i++) {
				long sent = System.nanoTime();
				roundTrip.run();
				hot[i] = System.nanoTime() - sent;
			}
			long[] idle = new long[SAMPLES];
			long[] overshoot = new long[SAMPLES];
			for (int i = 0; i < SAMPLES; i++) {
				long parked = System.nanoTime();
				LockSupport.parkNanos(IDLE_NANOS);
				long sent = System.nanoTime();
				overshoot[i] = sent - parked - IDLE_NANOS;
				roundTrip.run();
				idle[i] = System.nanoTime() - sent;
			}
			long[] notify = notifications(commands, subscriber);
			return new MachineProbe(p50Micros(hot), p50Micros(idle), p50Micros(notify), p50Micros(overshoot), SAMPLES);
		}
		finally {
			client.shutdown();
		}
	}

	/**
	 * PUBLISH after a 5 ms park → the listener unparks a thread waiting for that message
	 * → the thread runs; one sample per message.
	 */
	private static long[] notifications(RedisCommands<String, String> commands,
			StatefulRedisPubSubConnection<String, String> subscriber) throws InterruptedException {
		Notified notified = new Notified();
		subscriber.addListener(new RedisPubSubAdapter<>() {
			@Override
			public void message(String channel, String message) {
				notified.heard(Integer.parseInt(message));
			}
		});
		subscriber.sync().subscribe(CHANNEL);
		long[] samples = new long[SAMPLES];
		int warmUp = SAMPLES / 10;
		for (int message = 0; message < warmUp + SAMPLES; message++) {
			CountDownLatch running = notified.expect(message);
			LockSupport.parkNanos(IDLE_NANOS);
			long sent = System.nanoTime();
			commands.publish(CHANNEL, Integer.toString(message));
			if (!running.await(5, TimeUnit.SECONDS)) {
				throw new IllegalStateException("A published probe message was not heard within 5 s");
			}
			if (message >= warmUp) {
				samples[message - warmUp] = notified.wokenAt - sent;
			}
		}
		notified.stop();
		return samples;
	}

	/**
	 * The most S4 can reach when every hand-off costs at least a notification after the
	 * waiters idled: 5 ms ÷ (5 ms + overshoot + notification).
	 */
	double s4Ceiling() {
		double section = IDLE_NANOS / 1000.0;
		return section / (section + this.overshootMicros + this.notifyMicros);
	}

	private static double p50Micros(long[] nanos) {
		long[] sorted = nanos.clone();
		Arrays.sort(sorted);
		return sorted[sorted.length / 2] / 1000.0;
	}

	/** A thread parked until the message it expects is heard. */
	private static final class Notified {

		private final Thread waiter;

		private volatile int expected = -1;

		private volatile int heard = -1;

		private volatile CountDownLatch running;

		private volatile boolean stopped;

		volatile long wokenAt;

		Notified() {
			this.waiter = new Thread(this::run, "probe-waiter");
			this.waiter.setDaemon(true);
			this.waiter.start();
		}

		CountDownLatch expect(int message) {
			CountDownLatch latch = new CountDownLatch(1);
			this.running = latch;
			this.expected = message;
			LockSupport.unpark(this.waiter);
			return latch;
		}

		void heard(int message) {
			this.heard = message;
			LockSupport.unpark(this.waiter);
		}

		void stop() {
			this.stopped = true;
			LockSupport.unpark(this.waiter);
		}

		private void run() {
			int done = -1;
			while (!this.stopped) {
				int expected = this.expected;
				if (expected > done && this.heard == expected) {
					this.wokenAt = System.nanoTime();
					done = expected;
					this.running.countDown();
				}
				else {
					LockSupport.park(this);
				}
			}
		}

	}

}

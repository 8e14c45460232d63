package io.lockstep.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * MACHINE: what the machine allows a lock that tells its waiters rather than letting them
 * spin, with raw Lettuce (the floor's client) against the same kind of
 * {@code redis-server}: a round trip (the floor's release script) right after another and
 * after a 5 ms idle wait; a notification after a 5 ms idle wait (a PUBLISH, which the
 * client's pub/sub connection hears and which unparks the waiting thread: the path of a
 * hand-off told to a parked waiter, without a lock's own work); and how long a 5 ms
 * {@code parkNanos} lasts. A 5 ms critical section with sleeping waiters can reach at
 * most 5 ms ÷ (the park's p50 + the notification's p50), the ceiling of S4's efficiency.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(1)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class MachineBenchmark {

	static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private static final String CHANNEL = "bench:machine";

	private static final String[] KEYS = { "bench:machine" };

	private RedisTarget redis;

	private RedisClient client;

	private StatefulRedisConnection<String, String> connection;

	private StatefulRedisPubSubConnection<String, String> subscriber;

	private RedisCommands<String, String> commands;

	private String release;

	private volatile Thread waiting;

	private volatile boolean heard;

	@Setup(Level.Trial)
	public void start() {
		this.redis = RedisTarget.locate();
		this.redis.reset();
		this.client = RedisClient.create(this.redis.uri());
		this.connection = this.client.connect();
		this.commands = this.connection.sync();
		this.release = this.commands.scriptLoad(FloorContender.script("floor-release.lua"));
		this.subscriber = this.client.connectPubSub();
		this.subscriber.addListener(new RedisPubSubAdapter<>() {
			@Override
			public void message(String channel, String message) {
				MachineBenchmark.this.heard = true;
				LockSupport.unpark(MachineBenchmark.this.waiting);
			}
		});
		this.subscriber.sync().subscribe(CHANNEL);
	}

	@TearDown(Level.Trial)
	public void stop() {
		this.subscriber.close();
		this.connection.close();
		this.client.shutdown();
		this.redis.close();
	}

	/** A round trip sent right after the previous one. */
	@Benchmark
	public Long roundTrip() {
		return this.commands.evalsha(this.release, ScriptOutputType.INTEGER, KEYS, "token");
	}

	/** A round trip sent after a 5 ms idle wait (the wait is not measured). */
	@Benchmark
	public Long roundTripAfterIdle(Idle idle) {
		return this.commands.evalsha(this.release, ScriptOutputType.INTEGER, KEYS, "token");
	}

	/**
	 * After a 5 ms idle wait (not measured): PUBLISH sent → heard by the client's pub/sub
	 * connection, whose listener unparks this thread → this thread runs.
	 */
	@Benchmark
	public void notification(Idle idle) {
		this.heard = false;
		this.waiting = Thread.currentThread();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		this.connection.async().publish(CHANNEL, "wake");
		while (!this.heard) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("A published message was not heard within 5 s");
			}
			LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
		}
	}

	/** A 5 ms park: how late it returns is its time less 5,000 µs. */
	@Benchmark
	public void park() {
		LockSupport.parkNanos(IDLE_NANOS);
	}

	/** A 5 ms idle wait before each call, outside the measured time. */
	@State(Scope.Thread)
	public static class Idle {

		@Setup(Level.Invocation)
		public void idle() {
			LockSupport.parkNanos(IDLE_NANOS);
		}

	}

}

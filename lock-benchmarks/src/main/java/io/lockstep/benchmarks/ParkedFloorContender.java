package io.lockstep.benchmarks;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;

/**
 * The parked floor: what a lock whose waiters sleep until told has to pay at least, the
 * yardstick for a lock that does not poll. Raw Lettuce, as {@link FloorContender}: one
 * EVALSHA runs {@code SET key token NX PX lease} or else queues the token in Redis, and
 * the caller parks; one EVALSHA compares and hands the key to the first queued token
 * ({@code SET key next PX lease} and a {@code PUBLISH} of that token), or deletes it. The
 * client's pub/sub connection hears the token and unparks its thread. No fencing,
 * reentrancy, renewal, local queue or recovery of a lost message (a waiter gives up after
 * a minute). Every client hears every hand-off on one channel. Not a lock to use.
 */
final class ParkedFloorContender implements Contender {

	private static final String LEASE_MILLIS = "30000";

	private static final String CHANNEL = "bench:parked";

	private static final long WAIT_NANOS = TimeUnit.MINUTES.toNanos(1);

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final StatefulRedisPubSubConnection<String, String> subscriber;

	private final RedisCommands<String, String> commands;

	private final String acquireSha;

	private final String releaseSha;

	private final String owner = UUID.randomUUID().toString();

	private final AtomicLong acquisitions = new AtomicLong();

	/** The threads parked until their token is handed the key, by token. */
	private final Map<String, Thread> parked = new ConcurrentHashMap<>();

	ParkedFloorContender(RedisTarget redis) {
		this.client = RedisClient.create(redis.uri());
		this.connection = this.client.connect();
		this.commands = this.connection.sync();
		this.acquireSha = this.commands.scriptLoad(FloorContender.script("parked-acquire.lua"));
		this.releaseSha = this.commands.scriptLoad(FloorContender.script("parked-release.lua"));
		this.subscriber = this.client.connectPubSub();
		this.subscriber.addListener(new RedisPubSubAdapter<>() {
			@Override
			public void message(String channel, String token) {
				Thread waiter = ParkedFloorContender.this.parked.remove(token);
				if (waiter != null) {
					LockSupport.unpark(waiter);
				}
			}
		});
		this.subscriber.sync().subscribe(CHANNEL);
	}

	@Override
	public Held acquire(String key) {
		String token = this.owner + ":" + this.acquisitions.incrementAndGet();
		String[] keys = { key, key + ":queue" };
		this.parked.put(token, Thread.currentThread());
		if (this.commands.<Long>evalsha(this.acquireSha, ScriptOutputType.INTEGER, keys, token, LEASE_MILLIS) == 1) {
			this.parked.remove(token);
		}
		else {
			long deadline = System.nanoTime() + WAIT_NANOS;
			while (this.parked.containsKey(token)) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					this.parked.remove(token);
					throw new IllegalStateException("The parked floor was not handed " + key + " within a minute");
				}
				LockSupport.parkNanos(this, left);
			}
		}
		return () -> this.commands.<Long>evalsha(this.releaseSha, ScriptOutputType.INTEGER, keys, token, LEASE_MILLIS,
				CHANNEL);
	}

	@Override
	public void close() {
		this.subscriber.close();
		this.connection.close();
		this.client.shutdown();
	}

}

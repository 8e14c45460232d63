package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.api.sync.RedisCommands;
import io.lockstep.LockTemplate;

/**
 * Threads that take one key's read and write locks (one write in ten), or one of its
 * semaphore permits, over and over, holding each about 1 ms, and count in a separate
 * "ledger" Redis who is inside at once: a writer with anyone else inside, or more permit
 * holders than permits, is a violation; the most readers (or permit holders) seen inside
 * at once shows that they do share the key. Fencing tokens are recorded in the ledger
 * too: every token must be new, and a writer's must be higher than every token recorded
 * before it entered (every earlier holder's, of any mode).
 */
final class SharedContention {

	final AtomicLong violations = new AtomicLong();

	/** Fencing tokens handed out twice, or a writer's not above every earlier one. */
	final AtomicLong reused = new AtomicLong();

	final AtomicLong done = new AtomicLong();

	final AtomicLong reads = new AtomicLong();

	final AtomicLong writes = new AtomicLong();

	final AtomicLong mostInside = new AtomicLong();

	private final LockTemplate locks;

	private final RedisCommands<String, String> ledger;

	private final String key;

	/** 0: read/write locks; n: a semaphore of n permits. */
	private final int permits;

	SharedContention(LockTemplate locks, RedisCommands<String, String> ledger, String key, int permits) {
		this.locks = locks;
		this.ledger = ledger;
		this.key = key;
		this.permits = permits;
	}

	/** {@code "rw"} or {@code "sem:<n>"}, as the second JVM is told. */
	static int permitsOf(String mode) {
		return mode.equals("rw") ? 0 : Integer.parseInt(mode.substring(4));
	}

	void run(int threads, int iterations, Duration timeout) throws Exception {
		Contention.inParallel(threads, timeout, (thread) -> {
			for (int i = 0; i < iterations; i++) {
				once((i + thread) % 10 == 0);
			}
		});
	}

	private void once(boolean write) {
		if (this.permits > 0) {
			this.locks.withPermits(this.permits).execute(this.key, (lock) -> {
				shared("holders", this.permits, lock.fencingToken());
				return null;
			});
		}
		else if (write) {
			this.locks.write().execute(this.key, (lock) -> {
				exclusive(lock.fencingToken());
				return null;
			});
		}
		else {
			this.locks.read().execute(this.key, (lock) -> {
				shared("readers", Integer.MAX_VALUE, lock.fencingToken());
				return null;
			});
		}
		this.done.incrementAndGet();
	}

	private void shared(String who, int most, long fencingToken) {
		long inside = this.ledger.incr(who + ":" + this.key);
		if (inside > most || count("writers") != 0) {
			this.violations.incrementAndGet();
		}
		this.mostInside.accumulateAndGet(inside, Math::max);
		token(fencingToken);
		LockSupport.parkNanos(1_000_000);
		this.ledger.decr(who + ":" + this.key);
		this.reads.incrementAndGet();
	}

	private void exclusive(long fencingToken) {
		long writers = this.ledger.incr("writers:" + this.key);
		if (writers != 1 || count("readers") != 0) {
			this.violations.incrementAndGet();
		}
		List<io.lettuce.core.ScoredValue<String>> highest = this.ledger.zrevrangeWithScores("tokens:" + this.key, 0, 0);
		if (!highest.isEmpty() && highest.get(0).getScore() >= fencingToken) {
			this.reused.incrementAndGet();
		}
		token(fencingToken);
		LockSupport.parkNanos(1_000_000);
		this.ledger.decr("writers:" + this.key);
		this.writes.incrementAndGet();
	}

	private void token(long fencingToken) {
		if (this.ledger.zadd("tokens:" + this.key, fencingToken, Long.toString(fencingToken)) != 1) {
			this.reused.incrementAndGet();
		}
	}

	private long count(String who) {
		String value = this.ledger.get(who + ":" + this.key);
		return (value != null) ? Long.parseLong(value) : 0;
	}

}

package io.lockstep.faults;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.Retried;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.Eventually;

/**
 * The main class of the holder JVM in the fault tests, driven by lines on stdin:
 * <ul>
 * <li>{@code pause <lockPort> <ledgerPort> <key> <leaseMillis> <fenced 1|0>}: acquires
 * (watchdog lease), prints {@code ACQUIRED <token>}; on {@code WRITE} writes to the
 * ledger's register with its token and prints {@code WROTE accepted=<bool> held=<bool>};
 * on {@code CLOSE} releases and prints
 * {@code CLOSED lost=<bool> lostAt=<nanoTime of the loss signal, 0 if none>};</li>
 * <li>{@code load <lockPort> <ledgerPort> <threads> <hotPerThread> <spreadPerThread>
 * <spreadKeys>}: prints {@code READY}, waits for {@code GO}, runs {@link Load}, prints
 * {@code RESULT overlaps=.. done=..}.</li>
 * </ul>
 */
public final class FaultWorker {

	private FaultWorker() {
	}

	public static void main(String[] args) throws Exception {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", Integer.parseInt(args[1])));
		try (Ledger ledger = new Ledger(Integer.parseInt(args[2]))) {
			if (args[0].equals("pause")) {
				pause(in, client, ledger, args);
			}
			else {
				load(in, client, ledger, args);
			}
		}
		finally {
			client.shutdown();
		}
	}

	private static void pause(BufferedReader in, RedisClient client, Ledger ledger, String[] args) throws Exception {
		long leaseMillis = Long.parseLong(args[4]);
		boolean fenced = args[5].equals("1");
		AtomicLong lostAt = new AtomicLong();
		try (RedisLockTemplate locks = RedisLockTemplate.builder(client)
			.leaseTime(Duration.ofMillis(leaseMillis))
			.commandTimeout(Duration.ofMillis(leaseMillis / 4))
			.lockLostListener((event) -> lostAt.compareAndSet(0, System.nanoTime()))
			.build()) {
			// called again while it fails: the first connection of a new JVM can take
			// longer than the short command timeout, and a failed call is not retried
			LockHandle lock = Retried.call(() -> locks.acquire(args[3]), Duration.ofSeconds(30), Duration.ofMillis(50));
			report("ACQUIRED " + lock.fencingToken());
			String line;
			while ((line = in.readLine()) != null) {
				if (line.equals("WRITE")) {
					boolean held = lock.isHeld();
					boolean accepted = ledger.write(args[3], lock.fencingToken(), "paused holder", fenced);
					report("WROTE accepted=" + accepted + " held=" + held);
				}
				else if (line.equals("CLOSE")) {
					boolean lost = false;
					try {
						lock.close();
					}
					catch (LockLostException ex) {
						lost = true;
						Eventually.holds(Duration.ofSeconds(2), () -> lostAt.get() != 0);
					}
					report("CLOSED lost=" + lost + " lostAt=" + lostAt.get());
					return;
				}
			}
		}
	}

	private static void load(BufferedReader in, RedisClient client, Ledger ledger, String[] args) throws Exception {
		try (RedisLockTemplate locks = RedisLockTemplate.builder(client).waitTime(Duration.ofMinutes(2)).build()) {
			Load load = new Load(locks, ledger);
			report("READY");
			if (!"GO".equals(in.readLine())) {
				throw new IllegalStateException("expected GO");
			}
			load.run(Integer.parseInt(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]),
					Integer.parseInt(args[6]), Duration.ofMinutes(4));
			report("RESULT overlaps=" + load.overlaps + " done=" + load.done);
		}
	}

	@SuppressWarnings("java:S106")
	private static void report(String line) {
		System.out.println(line);
		System.out.flush();
	}

}

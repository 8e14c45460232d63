package io.lockstep.local;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.internal.engine.Probes;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.ReactiveLocks;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reactive locks on the JVM-local backend: the in-process release notification wakes a
 * waiting subscription as it wakes a parked thread.
 */
class LocalReactiveTests {

	@Test
	void eightSubscribersOnOneKeyNeverOverlap() {
		try (LocalLockTemplate blocking = LocalLockTemplate.builder().waitTime(Duration.ofMinutes(1)).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			long[] counter = { 0 };
			int subscribers = 8;
			int each = 250;
			long start = System.nanoTime();
			Long done = Flux.range(0, subscribers)
				.flatMap((subscriber) -> Flux.range(0, each)
					.concatMap((i) -> locks.execute("local", (lock) -> Mono.fromCallable(() -> {
						if (inside.incrementAndGet() > 1) {
							overlaps.incrementAndGet();
						}
						return counter[0];
					}).delayElement(Duration.ofMillis(1)).map((read) -> {
						counter[0] = read + 1;
						inside.decrementAndGet();
						return read;
					})))
					.subscribeOn(Schedulers.parallel()), subscribers)
				.count()
				.block(Duration.ofMinutes(1));
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf("local, %d subscribers on one key: %d acquisitions, %d overlaps, counter %d, %d ms%n",
					subscribers, done, overlaps.get(), counter[0], millis);
			assertThat(done).isEqualTo(subscribers * each);
			assertThat(overlaps.get()).isZero();
			assertThat(counter[0]).isEqualTo(subscribers * each);
			assertThat(Probes.engine(blocking).keysWaitedFor()).isZero();
		}
	}

}

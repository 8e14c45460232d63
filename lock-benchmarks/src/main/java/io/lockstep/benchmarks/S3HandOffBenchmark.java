package io.lockstep.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Control;

/**
 * S3: 8 threads on one key, empty critical section. A thread that released waits until
 * another thread got the lock before it asks again, so every acquisition is a hand-off
 * from one thread to another and the score is hand-offs per second.
 *
 * <p>
 * Hand-off latency: from the moment the holder starts its release call to the moment the
 * next holder (another thread) is inside, from {@link System#nanoTime()} stamps.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(8)
@Fork(1)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class S3HandOffBenchmark extends OneKeyBenchmark {

	private static final String KEY = "bench:s3";

	private final Object turns = new Object();

	private long turn;

	@Benchmark
	public void handOff(Slot slot, Control control) throws InterruptedException {
		if (!awaitAnotherHolder(slot, control)) {
			return;
		}
		holdOnce(slot, KEY, () -> nextTurn(slot));
	}

	/**
	 * Waits until another thread acquired since this one did; {@code false} when the
	 * iteration ended meanwhile.
	 */
	private boolean awaitAnotherHolder(Slot slot, Control control) throws InterruptedException {
		synchronized (this.turns) {
			while (this.turn == slot.lastTurn) {
				if (control.stopMeasurement) {
					return false;
				}
				this.turns.wait(1);
			}
		}
		return true;
	}

	private void nextTurn(Slot slot) {
		synchronized (this.turns) {
			slot.lastTurn = ++this.turn;
			this.turns.notifyAll();
		}
	}

}

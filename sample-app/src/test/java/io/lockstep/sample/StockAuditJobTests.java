package io.lockstep.sample;

import io.lockstep.shedlock.LockstepLockProvider;
import io.micrometer.core.instrument.MeterRegistry;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The sample's ShedLock job runs on Lockstep's auto-configured provider: under
 * {@code lockstep:shedlock:stock-audit}, with a fencing token and its meters, and skips
 * while its {@code lockAtLeastFor} keeps the lock.
 */
@SpringBootTest(properties = "sample.report-initial-delay=1h")
class StockAuditJobTests extends RealRedis {

	@Autowired
	private StockAuditJob job;

	@Autowired
	private LockProvider lockProvider;

	@Autowired
	private MeterRegistry meters;

	@Test
	void theShedLockJobRunsUnderALockstepLockAndSkipsForItsLockAtLeastFor() {
		assertThat(this.lockProvider).isInstanceOf(LockstepLockProvider.class);
		long before = this.job.runs();
		this.job.audit();
		assertThat(this.job.runs()).isEqualTo(before + 1);
		assertThat(this.job.lastFencingToken()).isPositive();
		long ttl = (Long) redis.call("PTTL", "lockstep:shedlock:stock-audit");
		System.out.printf("stock-audit ran with fencing token %d; its key's TTL after the run: %d ms%n",
				this.job.lastFencingToken(), ttl);
		assertThat(ttl).as("kept for lockAtLeastFor (50s)").isBetween(1L, 50_000L);
		this.job.audit();
		assertThat(this.job.runs()).as("skipped within lockAtLeastFor").isEqualTo(before + 1);
		assertThatIllegalStateException().as("outside the job").isThrownBy(LockAssert::assertLocked);
		assertThat(count("acquired")).isPositive();
		assertThat(count("skipped")).isPositive();
	}

	private long count(String outcome) {
		var timer = this.meters.find("lockstep.acquire").tag("lock", "stock-audit").tag("outcome", outcome).timer();
		return (timer != null) ? timer.count() : 0;
	}

}

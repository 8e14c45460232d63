package io.lockstep.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A jump of the client's wall clock (NTP step, an operator's {@code date -s}) cannot move
 * a lease deadline, a renewal or a wait: the library reads time only from
 * {@link System#nanoTime()} (monotonic), and the wall clock only to display when a lock
 * was acquired. Checked on the compiled library, so a new wall-clock read anywhere in it
 * fails this test. (The machine's clock is shared with everything else on it, so the
 * suite does not step it; the lock keys' expiry in Redis follows the Redis server's
 * clock, which {@link RedlockFaultMatrixTests} jumps, in effect, on one node.)
 */
@Tag("fault")
class ClientClockTests {

	private static final Set<String> WALL_CLOCK = Set.of("java.lang.System.currentTimeMillis", "java.time.Instant.now",
			"java.time.Clock.systemUTC", "java.time.Clock.systemDefaultZone", "java.time.Clock.millis",
			"java.time.Clock.instant", "java.time.LocalDateTime.now", "java.time.LocalDate.now",
			"java.time.LocalTime.now", "java.time.ZonedDateTime.now", "java.time.OffsetDateTime.now",
			"java.util.Date.<init>", "java.util.Calendar.getInstance");

	/** The one wall-clock read: when a lease was acquired, for the locks endpoint. */
	private static final String DISPLAY_ONLY = "io.lockstep.internal.engine.Lease.<init> -> java.time.Instant.now";

	private static final JavaClasses library = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
		.importPackages("io.lockstep");

	@AfterAll
	static void printTable() {
		Figures.printTable();
	}

	@Test
	void leaseDeadlinesRenewalsAndWaitsReadOnlyTheMonotonicClock() {
		List<String> wallClock = new ArrayList<>();
		int monotonic = clockReads(library, wallClock);
		Figures figures = new Figures("client wall-clock jump (static check)", "lock + fencing", 0, 0, 0,
				Figures.NOT_APPLICABLE, Figures.NOT_APPLICABLE, 0)
			.report();
		System.out.printf("client clock: %d reads of System.nanoTime() in the library; wall-clock reads: %s%n",
				monotonic, wallClock);
		assertThat(figures.anomaly()).isFalse();
		assertThat(monotonic).isPositive();
		assertThat(wallClock).as("wall-clock reads in the library").containsExactly(DISPLAY_ONLY);

		// control: the checker sees a deadline taken from the wall clock
		List<String> control = new ArrayList<>();
		clockReads(new ClassFileImporter().importClasses(WallClockDeadline.class), control);
		System.out.printf("client clock control (a deadline from the wall clock): wall-clock reads found: %s%n",
				control);
		assertThat(control).as("the control shows the anomaly").hasSize(1);
	}

	/** Collects the wall-clock reads; returns the count of monotonic reads. */
	private static int clockReads(JavaClasses classes, List<String> wallClock) {
		int monotonic = 0;
		for (JavaClass type : classes) {
			for (JavaCall<?> call : type.getCodeUnitCallsFromSelf()) {
				String target = call.getTargetOwner().getFullName() + "." + call.getName();
				if (WALL_CLOCK.contains(target)) {
					wallClock.add(call.getOrigin().getFullName().replaceAll("\\(.*\\)", "") + " -> " + target);
				}
				if (target.equals("java.lang.System.nanoTime")) {
					monotonic++;
				}
			}
		}
		return monotonic;
	}

	/** The unprotected control: a lease deadline a wall-clock jump would move. */
	static final class WallClockDeadline {

		private final long deadlineMillis;

		WallClockDeadline(long leaseMillis) {
			this.deadlineMillis = System.currentTimeMillis() + leaseMillis;
		}

		boolean isHeld() {
			return this.deadlineMillis > 0;
		}

	}

}

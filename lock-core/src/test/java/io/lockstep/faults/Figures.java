package io.lockstep.faults;

import java.util.ArrayList;
import java.util.List;

/**
 * What one run of one fault measured, printed as one row of the fault table.
 *
 * @param fault the fault, e.g. {@code redis SIGSTOP 2.5 s (> lease)}
 * @param run what protected the work: {@code lock + fencing}, or the unprotected control
 * @param overlaps times another owner acquired while a holder still believed it held the
 * lock (its {@code isHeld()} was true), plus occupancy overlaps seen in the ledger
 * @param lostUpdates read-modify-writes of the ledger counter that were lost
 * @param staleAccepted writes with a lower fencing token than one already accepted that
 * the storage accepted
 * @param detectionMillis from the fault's start until the holder was told its lease was
 * lost; {@value #NONE} when it was not lost, {@value #NOT_APPLICABLE} where no fault
 * could take it
 * @param recoveryMillis from the fault's start until another client acquired the lock;
 * {@value #NONE} when none did in the time allowed, {@value #NOT_APPLICABLE} without a
 * fault
 * @param keysLeft lock keys left in Redis once every owner closed or died and a lease
 * passed
 * @param duplicateTokens times the next owner got the same fencing token as the holder
 */
record Figures(String fault, String run, long overlaps, long lostUpdates, long staleAccepted, long detectionMillis,
		long recoveryMillis, long keysLeft, long duplicateTokens) {

	Figures(String fault, String run, long overlaps, long lostUpdates, long staleAccepted, long detectionMillis,
			long recoveryMillis, long keysLeft) {
		this(fault, run, overlaps, lostUpdates, staleAccepted, detectionMillis, recoveryMillis, keysLeft, 0);
	}

	static final long NONE = -1;

	static final long NOT_APPLICABLE = -2;

	private static final List<Figures> table = new ArrayList<>();

	/** Whether a checker saw an anomaly. */
	boolean anomaly() {
		return this.overlaps > 0 || this.lostUpdates > 0 || this.staleAccepted > 0 || this.keysLeft > 0
				|| this.recoveryMillis == NONE || this.duplicateTokens > 0;
	}

	/**
	 * Prints this row and every row recorded so far in this JVM (the last table printed
	 * is the whole suite's).
	 */
	Figures report() {
		synchronized (table) {
			table.add(this);
			System.out.printf("FAULT %s%n", row(this));
		}
		return this;
	}

	/** Prints the table of every run recorded so far in this JVM. */
	static void printTable() {
		synchronized (table) {
			StringBuilder out = new StringBuilder("\nFault figures (").append(table.size()).append(" runs)\n");
			out.append(String.format("%-46s | %-27s | %8s | %4s | %5s | %3s | %9s | %9s | %4s | %s%n", "fault", "run",
					"overlaps", "lost", "stale", "dup", "detection", "recovery", "keys", "anomaly"));
			for (Figures figures : table) {
				out.append(row(figures)).append('\n');
			}
			System.out.print(out);
		}
	}

	private static String row(Figures f) {
		return String.format("%-46s | %-27s | %8d | %4d | %5d | %3d | %9s | %9s | %4d | %s", f.fault, f.run, f.overlaps,
				f.lostUpdates, f.staleAccepted, f.duplicateTokens, millis(f.detectionMillis, "not lost"),
				millis(f.recoveryMillis, "never"), f.keysLeft, f.anomaly() ? "DETECTED" : "none");
	}

	private static String millis(long value, String otherwise) {
		if (value == NOT_APPLICABLE) {
			return "n/a";
		}
		return (value < 0) ? otherwise : value + " ms";
	}

}

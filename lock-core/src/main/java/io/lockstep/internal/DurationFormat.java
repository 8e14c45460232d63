package io.lockstep.internal;

import java.math.BigDecimal;
import java.time.Duration;

/**
 * Renders durations as people write them in {@code application.yml}: {@code 30s},
 * {@code 250ms}, {@code 1h}, {@code 1.5s}, not ISO-8601 ({@code PT10.0026S}). Measured
 * values are rounded to the millisecond ({@code 10.003s}); below a millisecond to the
 * microsecond ({@code 250us}). The one formatter of every message and endpoint.
 */
public final class DurationFormat {

	private static final long SECOND = 1_000;

	private static final long MINUTE = 60 * SECOND;

	private static final long HOUR = 60 * MINUTE;

	private static final long DAY = 24 * HOUR;

	private DurationFormat() {
	}

	/**
	 * The duration in the largest unit that states it exactly (after rounding):
	 * {@code d}, {@code h}, {@code m}; else seconds with up to three decimals from one
	 * second up, milliseconds below; {@code "none"} for {@code null}.
	 */
	public static String format(Duration duration) {
		if (duration == null) {
			return "none";
		}
		if (duration.isNegative()) {
			return "-" + format(duration.negated());
		}
		if (duration.isZero()) {
			return "0s";
		}
		if (duration.getSeconds() == 0 && duration.getNano() < 999_500) {
			int nanos = duration.getNano();
			return (nanos < 1_000) ? nanos + "ns" : Math.round(nanos / 1_000.0) + "us";
		}
		long millis = Math.addExact(Math.multiplyExact(duration.getSeconds(), SECOND),
				(duration.getNano() + 500_000) / 1_000_000);
		if (millis < SECOND) {
			return millis + "ms";
		}
		if (millis % DAY == 0) {
			return millis / DAY + "d";
		}
		if (millis % HOUR == 0) {
			return millis / HOUR + "h";
		}
		if (millis % MINUTE == 0) {
			return millis / MINUTE + "m";
		}
		return BigDecimal.valueOf(millis, 3).stripTrailingZeros().toPlainString() + "s";
	}

}

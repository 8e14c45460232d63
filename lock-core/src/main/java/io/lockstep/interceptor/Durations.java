package io.lockstep.interceptor;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the durations of {@link io.lockstep.DistributedLock}: a number with an optional
 * unit ({@code ns}, {@code us}, {@code ms}, {@code s}, {@code m}, {@code h}, {@code d};
 * none means milliseconds), or ISO-8601 ({@code PT2S}). The same forms Spring Boot
 * accepts for {@code Duration} properties.
 */
final class Durations {

	private static final Pattern SIMPLE = Pattern.compile("^([+-]?\\d+)\\s*(ns|us|ms|s|m|h|d)?$",
			Pattern.CASE_INSENSITIVE);

	private Durations() {
	}

	/**
	 * Parses the text.
	 * @throws IllegalArgumentException if it is not a duration, or negative; the message
	 * continues a sentence that names the text
	 */
	static Duration parse(String text) {
		String trimmed = text.trim();
		Duration duration = parseUnchecked(trimmed);
		if (duration.isNegative()) {
			throw new IllegalArgumentException("must not be negative");
		}
		return duration;
	}

	private static Duration parseUnchecked(String text) {
		Matcher matcher = SIMPLE.matcher(text);
		if (matcher.matches()) {
			long amount;
			try {
				amount = Long.parseLong(matcher.group(1));
			}
			catch (NumberFormatException ex) {
				throw invalid();
			}
			String unit = (matcher.group(2) != null) ? matcher.group(2).toLowerCase(Locale.ROOT) : "ms";
			return switch (unit) {
				case "ns" -> Duration.ofNanos(amount);
				case "us" -> Duration.ofNanos(Math.multiplyExact(amount, 1000L));
				case "ms" -> Duration.ofMillis(amount);
				case "s" -> Duration.ofSeconds(amount);
				case "m" -> Duration.ofMinutes(amount);
				case "h" -> Duration.ofHours(amount);
				default -> Duration.ofDays(amount);
			};
		}
		try {
			return Duration.parse(text);
		}
		catch (DateTimeParseException ex) {
			throw invalid();
		}
	}

	private static IllegalArgumentException invalid() {
		return new IllegalArgumentException("is not a duration; use e.g. 500ms, 2s, 1m or ISO-8601 such as PT2S");
	}

}

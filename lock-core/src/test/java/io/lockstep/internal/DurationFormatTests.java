package io.lockstep.internal;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DurationFormatTests {

	@Test
	void wholeUnitsAreWrittenAsInApplicationYml() {
		assertThat(DurationFormat.format(Duration.ofSeconds(30))).isEqualTo("30s");
		assertThat(DurationFormat.format(Duration.ofMillis(250))).isEqualTo("250ms");
		assertThat(DurationFormat.format(Duration.ofMinutes(5))).isEqualTo("5m");
		assertThat(DurationFormat.format(Duration.ofHours(1))).isEqualTo("1h");
		assertThat(DurationFormat.format(Duration.ofDays(2))).isEqualTo("2d");
		assertThat(DurationFormat.format(Duration.ofSeconds(90))).isEqualTo("90s");
		assertThat(DurationFormat.format(Duration.ZERO)).isEqualTo("0s");
	}

	@Test
	void measuredValuesAreRoundedToTheMillisecond() {
		assertThat(DurationFormat.format(Duration.parse("PT10.0026S"))).isEqualTo("10.003s");
		assertThat(DurationFormat.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
		assertThat(DurationFormat.format(Duration.ofNanos(150_300_000))).isEqualTo("150ms");
		assertThat(DurationFormat.format(Duration.ofNanos(999_999_999))).isEqualTo("1s");
		assertThat(DurationFormat.format(Duration.ofNanos(999_700))).isEqualTo("1ms");
	}

	@Test
	void belowAMillisecondMicrosecondsOrNanoseconds() {
		assertThat(DurationFormat.format(Duration.ofNanos(250_400))).isEqualTo("250us");
		assertThat(DurationFormat.format(Duration.ofNanos(700))).isEqualTo("700ns");
	}

	@Test
	void negativeAndMissing() {
		assertThat(DurationFormat.format(Duration.ofMillis(-250))).isEqualTo("-250ms");
		assertThat(DurationFormat.format(null)).isEqualTo("none");
	}

}

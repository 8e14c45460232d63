package io.lockstep.interceptor;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class DurationsTests {

	@Test
	void parsesSimpleFormsWithUnits() {
		assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
		assertThat(Durations.parse("2s")).isEqualTo(Duration.ofSeconds(2));
		assertThat(Durations.parse(" 3 m ")).isEqualTo(Duration.ofMinutes(3));
		assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
		assertThat(Durations.parse("1d")).isEqualTo(Duration.ofDays(1));
		assertThat(Durations.parse("10us")).isEqualTo(Duration.ofNanos(10_000));
		assertThat(Durations.parse("7ns")).isEqualTo(Duration.ofNanos(7));
		assertThat(Durations.parse("2S")).isEqualTo(Duration.ofSeconds(2));
	}

	@Test
	void numberWithoutUnitIsMilliseconds() {
		assertThat(Durations.parse("250")).isEqualTo(Duration.ofMillis(250));
		assertThat(Durations.parse("0")).isZero();
	}

	@Test
	void parsesIso8601() {
		assertThat(Durations.parse("PT2S")).isEqualTo(Duration.ofSeconds(2));
		assertThat(Durations.parse("pt0.5s")).isEqualTo(Duration.ofMillis(500));
	}

	@Test
	void rejectsWhatIsNotADuration() {
		assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse("2 seconds"))
			.withMessageContaining("is not a duration");
		assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse("")).withMessageContaining("500ms");
		assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse("99999999999999999999s"));
	}

	@Test
	void rejectsNegativeDurations() {
		assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse("-1s")).withMessageContaining("negative");
		assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse("PT-1S"));
	}

}

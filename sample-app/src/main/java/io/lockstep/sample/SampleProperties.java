package io.lockstep.sample;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The sample's own settings ({@code sample.*}); Lockstep's are {@code lockstep.*}.
 */
@ConfigurationProperties("sample")
public class SampleProperties {

	/**
	 * Whether to start an embedded Redis when no spring.data.redis.* server is
	 * configured.
	 */
	private boolean embeddedRedis = true;

	/**
	 * Time between reading and writing the stock of an order: the window in which
	 * unlocked orders collide.
	 */
	private Duration processingTime = Duration.ofMillis(3);

	/**
	 * How often every instance schedules the stock report.
	 */
	private Duration reportInterval = Duration.ofSeconds(30);

	/**
	 * Delay before the first stock report.
	 */
	private Duration reportInitialDelay = Duration.ofSeconds(5);

	/**
	 * How long the report's lock stays taken after it started, so that the other
	 * instances skip that interval; a little shorter than the interval.
	 */
	private Duration reportMinHold = Duration.ofSeconds(25);

	public boolean isEmbeddedRedis() {
		return this.embeddedRedis;
	}

	public void setEmbeddedRedis(boolean embeddedRedis) {
		this.embeddedRedis = embeddedRedis;
	}

	public Duration getProcessingTime() {
		return this.processingTime;
	}

	public void setProcessingTime(Duration processingTime) {
		this.processingTime = processingTime;
	}

	public Duration getReportInterval() {
		return this.reportInterval;
	}

	public void setReportInterval(Duration reportInterval) {
		this.reportInterval = reportInterval;
	}

	public Duration getReportInitialDelay() {
		return this.reportInitialDelay;
	}

	public void setReportInitialDelay(Duration reportInitialDelay) {
		this.reportInitialDelay = reportInitialDelay;
	}

	public Duration getReportMinHold() {
		return this.reportMinHold;
	}

	public void setReportMinHold(Duration reportMinHold) {
		this.reportMinHold = reportMinHold;
	}

}

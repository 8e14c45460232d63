package io.lockstep.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;

import io.lockstep.DistributedLock;
import io.lockstep.LockAcquisitionException;
import io.lockstep.OnLocked;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every broken {@link DistributedLock} fails the start of the application context with a
 * message naming the class, the method and the attribute.
 */
@RedisTest
class StartupValidationTests {

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class));

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
	}

	@Test
	void validAnnotationsStart() {
		this.contextRunner.withBean(Valid.class)
			.withPropertyValues("orders.lock-wait=750ms", "lockstep.max-hold-time=1m")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void badMinHoldTime() {
		assertFails(BadMinHold.class, "BadMinHold.run()", "minHoldTime '4 seconds'", "is not a duration");
	}

	@Test
	void minHoldTimeLongerThanTheFixedLease() {
		assertFails(MinHoldOverLease.class, "MinHoldOverLease.run()",
				"'minHoldTime' (PT3S) must not be longer than the fixed 'leaseTime' (PT2S)");
	}

	@Test
	void minHoldTimeFromAPlaceholderLongerThanTheMaxHoldTime() {
		this.contextRunner.withBean(PlaceholderMinHold.class)
			.withPropertyValues("reports.min-hold=90s", "lockstep.max-hold-time=1m")
			.run((context) -> assertThat(lockFailure(context.getStartupFailure()))
				.hasMessageStartingWith("@DistributedLock on " + PlaceholderMinHold.class.getName() + ".")
				.hasMessageContainingAll("PlaceholderMinHold.run()",
						"'minHoldTime' (PT1M30S) must not be longer than the max-hold-time (PT1M)"));
	}

	@Test
	void minHoldTimeOfTheLockNameLongerThanTheFixedLease() {
		this.contextRunner.withBean(NamedFixedLease.class)
			.withPropertyValues("lockstep.locks.report.min-hold-time=3s")
			.run((context) -> assertThat(lockFailure(context.getStartupFailure())).hasMessageContainingAll(
					"NamedFixedLease.run()",
					"'minHoldTime' (PT3S) must not be longer than the fixed 'leaseTime' (PT2S)"));
	}

	@Test
	void minHoldTimeOfALockNameLongerThanTheMaxHoldTime() {
		this.contextRunner.withPropertyValues("lockstep.locks.report.min-hold-time=2m", "lockstep.max-hold-time=1m")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining(
						"'locks.report.min-hold-time' (PT2M) must not be longer than the max-hold-time " + "(PT1M)"));
	}

	@Test
	void keyThatDoesNotParse() {
		assertFails(BrokenKey.class, "BrokenKey.place(String)", "key '#sku.'", "does not parse");
	}

	@Test
	void keyNamingAnUnknownParameter() {
		assertFails(UnknownVariable.class, "UnknownVariable.place(String)", "key '#skuu'",
				"'#skuu', which is not a parameter", "#sku");
	}

	@Test
	void keyWithATypeReference() {
		assertFails(TypeReference.class, "TypeReference.place(String)", "key", "type references");
	}

	@Test
	void keyWithAConstructor() {
		assertFails(Constructor.class, "Constructor.place(String)", "key", "constructors");
	}

	@Test
	void keyWithAnAssignment() {
		assertFails(Assignment.class, "Assignment.place(String)", "key", "assignments");
	}

	@Test
	void keyOverTheLengthLimit() {
		assertFails(LongKey.class, "LongKey.place(String)", "key", "over the limit of 1024");
	}

	@Test
	void badWaitTime() {
		assertFails(BadWait.class, "BadWait.place(String)", "waitTime '2 seconds'", "is not a duration");
	}

	@Test
	void badLeaseTimeFromAPlaceholder() {
		this.contextRunner.withBean(PlaceholderLease.class)
			.withPropertyValues("orders.lease=soon")
			.run((context) -> assertThat(lockFailure(context.getStartupFailure())).hasMessageContainingAll(
					"PlaceholderLease.place(String)", "leaseTime '${orders.lease}'",
					"resolved to 'soon') is not a duration"));
	}

	@Test
	void leaseTimeTheTemplateRejects() {
		assertFails(TinyLease.class, "TinyLease.place(String)", "'leaseTime' must be between");
	}

	@Test
	void unknownFallback() {
		assertFails(UnknownFallback.class, "UnknownFallback.place(String)", "fallback 'nowhere'",
				"no method of that name exists");
	}

	@Test
	void fallbackWithOtherParameters() {
		assertFails(MismatchedFallback.class, "MismatchedFallback.place(String)", "fallback 'busy'",
				"found only busy(Long)");
	}

	@Test
	void fallbackWithAnotherReturnType() {
		assertFails(FallbackReturnType.class, "FallbackReturnType.place(String)", "fallback 'busy'", "not assignable");
	}

	@Test
	void fallbackTogetherWithSkip() {
		assertFails(FallbackAndSkip.class, "FallbackAndSkip.place(String)", "fallback 'busy'",
				"onLocked = SKIP exclude each other");
	}

	@Test
	void skipOnAPrimitiveReturnType() {
		assertFails(PrimitiveSkip.class, "PrimitiveSkip.count(String)", "onLocked 'SKIP'", "primitive");
	}

	@Test
	void unsupportedAsynchronousReturnType() {
		assertFails(PlainFuture.class, "PlainFuture.place(String)", "return type 'java.util.concurrent.Future'",
				"not supported");
	}

	@Test
	void methodAProxyCannotIntercept() {
		assertFails(FinalMethod.class, "FinalMethod.place(String)", "final");
	}

	@Test
	void reservedName() {
		assertFails(ReservedName.class, "ReservedName.place(String)", "name '__fence'", "reserved");
	}

	@Test
	void keyReadingAPropertyAStringCannotHave() {
		assertFails(NoSuchProperty.class, "NoSuchProperty.place(String)", "key '#sku.nosuch'",
				"reads 'nosuch' on java.lang.String, which has no such property");
	}

	@Test
	void keyReadingAPropertyARecordCannotHaveDownAChain() {
		assertFails(NoSuchRecordProperty.class, "NoSuchRecordProperty.place(" + Order.class.getSimpleName() + ")",
				"key '#order.id.nosuch'", "reads 'nosuch' on java.lang.String");
		assertFails(NoSuchRecordMethod.class, "NoSuchRecordMethod.place(", "key '#order.code()'",
				"calls 'code' with 0 argument(s) on " + Order.class.getName() + ", which has no such public method");
	}

	@Test
	void keyReadingAMemberOfAnEnumOrABoxThatCannotExist() {
		assertFails(NoSuchEnumProperty.class, "NoSuchEnumProperty.place(", "key '#status.label'",
				"reads 'label' on " + Status.class.getName());
		assertFails(NoSuchPrimitiveMember.class, "NoSuchPrimitiveMember.place(int)", "key '#count.size'",
				"reads 'size' on java.lang.Integer");
	}

	@Test
	void keysReadingMembersThatExistOrThatAnOpenTypeMayHaveStart() {
		this.contextRunner.withBean(ExistingMembers.class).run((context) -> assertThat(context).hasNotFailed());
	}

	private void assertFails(Class<?> bean, String... messages) {
		this.contextRunner.withBean(bean)
			.run((context) -> assertThat(lockFailure(context.getStartupFailure()))
				.hasMessageStartingWith("@DistributedLock on " + bean.getName() + ".")
				.hasMessageContainingAll(messages));
	}

	/** The exception that names the method, as the start-up log shows it. */
	private static Throwable lockFailure(Throwable failure) {
		assertThat(failure).as("start-up failure").isNotNull();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof IllegalStateException && cause.getMessage().startsWith("@DistributedLock on ")) {
				return cause;
			}
		}
		throw new AssertionError("No @DistributedLock failure in the chain", failure);
	}

	static class Valid {

		@DistributedLock(key = "#order.id + ':' + #p1 + #root.methodName", name = "orders",
				waitTime = "${orders.lock-wait:2s}", leaseTime = "PT10S")
		String place(Order order, int quantity) {
			return "ok";
		}

		@DistributedLock(key = "#skus", onLocked = OnLocked.SKIP)
		List<String> skip(List<String> skus) {
			return skus;
		}

		@DistributedLock(key = "#sku", fallback = "busy")
		String withFallback(String sku) {
			return sku;
		}

		@DistributedLock(key = "'report'", minHoldTime = "${reports.min-hold:55s}", onLocked = OnLocked.SKIP)
		void report() {
		}

		@DistributedLock(key = "'fixed-report'", leaseTime = "10s", minHoldTime = "10s", onLocked = OnLocked.SKIP)
		void fixedReport() {
		}

		String busy(String sku, RuntimeException ex) {
			return "busy";
		}

	}

	record Order(String id) {
	}

	static class BrokenKey {

		@DistributedLock(key = "#sku.")
		void place(String sku) {
		}

	}

	static class UnknownVariable {

		@DistributedLock(key = "#skuu")
		void place(String sku) {
		}

	}

	static class TypeReference {

		@DistributedLock(key = "T(java.lang.Runtime).getRuntime()")
		void place(String sku) {
		}

	}

	static class Constructor {

		@DistributedLock(key = "new java.lang.StringBuilder(#sku)")
		void place(String sku) {
		}

	}

	static class Assignment {

		@DistributedLock(key = "#sku = 'x'")
		void place(String sku) {
		}

	}

	static class LongKey {

		static final String HUNDRED = "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789";

		static final String TEN_TIMES = HUNDRED + HUNDRED + HUNDRED + HUNDRED + HUNDRED + HUNDRED + HUNDRED + HUNDRED
				+ HUNDRED + HUNDRED + HUNDRED;

		static final String KEY = "#sku + '" + TEN_TIMES + "'";

		@DistributedLock(key = KEY)
		void place(String sku) {
		}

	}

	static class BadWait {

		@DistributedLock(key = "#sku", waitTime = "2 seconds")
		void place(String sku) {
		}

	}

	static class PlaceholderLease {

		@DistributedLock(key = "#sku", leaseTime = "${orders.lease}")
		void place(String sku) {
		}

	}

	static class TinyLease {

		@DistributedLock(key = "#sku", leaseTime = "1ms")
		void place(String sku) {
		}

	}

	static class UnknownFallback {

		@DistributedLock(key = "#sku", fallback = "nowhere")
		void place(String sku) {
		}

	}

	static class MismatchedFallback {

		@DistributedLock(key = "#sku", fallback = "busy")
		void place(String sku) {
		}

		void busy(Long sku) {
		}

	}

	static class FallbackReturnType {

		@DistributedLock(key = "#sku", fallback = "busy")
		String place(String sku) {
			return sku;
		}

		Integer busy(String sku, LockAcquisitionException ex) {
			return 0;
		}

	}

	static class FallbackAndSkip {

		@DistributedLock(key = "#sku", fallback = "busy", onLocked = OnLocked.SKIP)
		String place(String sku) {
			return sku;
		}

		String busy(String sku) {
			return "busy";
		}

	}

	static class PrimitiveSkip {

		@DistributedLock(key = "#sku", onLocked = OnLocked.SKIP)
		int count(String sku) {
			return 1;
		}

	}

	static class PlainFuture {

		@DistributedLock(key = "#sku")
		Future<String> place(String sku) {
			return null;
		}

	}

	static class FinalMethod {

		@DistributedLock(key = "#sku")
		final void place(String sku) {
		}

	}

	static class BadMinHold {

		@DistributedLock(key = "'report'", minHoldTime = "4 seconds")
		void run() {
		}

	}

	static class MinHoldOverLease {

		@DistributedLock(key = "'report'", leaseTime = "2s", minHoldTime = "3s")
		void run() {
		}

	}

	static class PlaceholderMinHold {

		@DistributedLock(key = "'report'", minHoldTime = "${reports.min-hold}")
		void run() {
		}

	}

	static class NamedFixedLease {

		@DistributedLock(key = "'daily'", name = "report", leaseTime = "2s")
		void run() {
		}

	}

	static class ReservedName {

		@DistributedLock(key = "#sku", name = "__fence")
		void place(String sku) {
		}

	}

	static class NoSuchProperty {

		@DistributedLock(key = "#sku.nosuch")
		void place(String sku) {
		}

	}

	static class NoSuchRecordProperty {

		@DistributedLock(key = "#order.id.nosuch")
		void place(Order order) {
		}

	}

	static class NoSuchRecordMethod {

		@DistributedLock(key = "#order.code()")
		void place(Order order) {
		}

	}

	enum Status {

		OPEN, CLOSED

	}

	static class NoSuchEnumProperty {

		@DistributedLock(key = "#status.label")
		void place(Status status) {
		}

	}

	static class NoSuchPrimitiveMember {

		@DistributedLock(key = "#count.size")
		void place(int count) {
		}

	}

	/** Members that exist, and members an open type's run-time subtype may have. */
	static class ExistingMembers {

		@DistributedLock(key = "#sku.bytes.length + #sku.empty + #sku.toUpperCase() + #order.id.length()")
		void place(String sku, Order order) {
		}

		@DistributedLock(key = "#status.name() + #status.ordinal() + #count.toString() + #root.methodName")
		void place(Status status, int count) {
		}

		@DistributedLock(key = "#item.whatever + #items[0].anything")
		void place(Object item, java.util.List<CharSequence> items) {
		}

	}

	@Test
	void constantKeyWithoutQuotesFailsTheStartNamingTheMethodAndTheQuotedForm() {
		this.contextRunner.withBean(ReportJob.class).run((context) -> {
			assertThat(context).hasFailed();
			List<String> messages = new ArrayList<>();
			for (Throwable cause = context.getStartupFailure(); cause != null; cause = cause.getCause()) {
				messages.add(cause.getClass().getSimpleName() + ": " + cause.getMessage());
			}
			messages.forEach((message) -> System.out.printf("start-up failure: %s%n", message));
			assertThat(messages).anySatisfy((String message) -> assertThat(message)
				.contains(ReportJob.class.getSimpleName() + ".run(", "'report'"));
		});
	}

	static class ReportJob {

		@DistributedLock(key = "report")
		public void run() {
		}

	}

}

package io.lockstep.autoconfigure;

import io.lockstep.internal.LockConfigurationException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a start-up failure caused by a Lockstep setting that cannot work (a broken
 * {@code @DistributedLock} or a wrong {@code lockstep.*} property): what is wrong, naming
 * the method or the property, and what to do, in Spring Boot's "APPLICATION FAILED TO
 * START" report instead of a stack trace.
 */
class LockstepFailureAnalyzer extends AbstractFailureAnalyzer<LockConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, LockConfigurationException cause) {
		return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
	}

}

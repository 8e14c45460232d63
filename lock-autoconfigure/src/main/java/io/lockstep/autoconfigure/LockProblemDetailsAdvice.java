package io.lockstep.autoconfigure;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockKeyException;
import io.lockstep.LockLostException;
import io.lockstep.internal.DurationFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers a {@link LockException} that reaches a Spring MVC or WebFlux controller as RFC
 * 9457 problem details: {@code 409 Conflict} for a {@link LockAcquisitionException}
 * (another owner held the lock for longer than the call waited), {@code 503 Service
 * Unavailable} for any other (the lock store did not answer or failed, or the lease was
 * lost). The {@code lock} property is the lock's name
 * ({@link LockException#getLockName()}, set for {@code @DistributedLock} methods), never
 * a key's value, and the answer tells nothing of the key or of the store. A
 * {@link LockKeyException} is the application's own mistake and is not answered here.
 * Ordered last: an {@code @ExceptionHandler} of the application's, on the controller or
 * in an advice of its own, wins.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
class LockProblemDetailsAdvice {

	private static final Logger logger = LoggerFactory.getLogger(LockProblemDetailsAdvice.class);

	@ExceptionHandler
	ResponseEntity<ProblemDetail> lockException(LockException ex) {
		if (ex instanceof LockKeyException) {
			// the application's mistake: left to its own handling (a 500 by default)
			throw ex;
		}
		ProblemDetail problem;
		if (ex instanceof LockAcquisitionException notAcquired) {
			problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT,
					"Another owner held the lock for longer than this request waited ("
							+ DurationFormat.format(notAcquired.getWaited()) + "); try again later.");
			problem.setTitle("Lock not acquired");
		}
		else {
			logger.warn("Answering 503 Service Unavailable for lock '{}': {}", ex.getLockName(), ex.getMessage());
			problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
					(ex instanceof LockLostException) ? "The lock was lost while this request ran."
							: "The lock could not be taken: its store did not answer or failed.");
			problem.setTitle("Lock unavailable");
		}
		String lockName = ex.getLockName();
		if (lockName != null) {
			problem.setProperty("lock", lockName);
		}
		return ResponseEntity.of(problem).build();
	}

}

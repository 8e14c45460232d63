package io.lockstep.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ProblemDetail;

/**
 * {@link AutoConfiguration Auto-configuration} of the web answers to lock exceptions in
 * Spring MVC and WebFlux applications: {@code 409 Conflict} for a
 * {@code LockAcquisitionException}, {@code 503 Service Unavailable} for another
 * {@code LockException} (a {@code LockKeyException} excepted), as RFC 9457 problem
 * details naming the lock. The application's own exception handlers win;
 * {@code lockstep.web.problem-details=false} turns it off.
 */
@AutoConfiguration
@ConditionalOnWebApplication
@ConditionalOnClass(ProblemDetail.class)
@ConditionalOnBooleanProperty(name = "lockstep.web.problem-details", matchIfMissing = true)
public final class LockstepWebAutoConfiguration {

	@Bean
	LockProblemDetailsAdvice lockstepProblemDetailsAdvice() {
		return new LockProblemDetailsAdvice();
	}

}

package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import io.lockstep.LockLostListener;
import io.lockstep.LockTemplate;
import io.lockstep.interceptor.DistributedLockAdvisor;
import io.lockstep.interceptor.HeldLocksTransactionListener;
import io.lockstep.LockTemplateBuilder;
import io.lockstep.internal.LockConfigurationException;
import io.lockstep.local.LocalLockTemplate;
import io.lockstep.observation.LockObservationConvention;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.redis.RedisLockTemplateBuilder;
import io.micrometer.observation.ObservationRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.thread.Threading;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * {@link AutoConfiguration Auto-configuration} of Lockstep: a {@link RedisLockTemplate}
 * on the Lettuce client of the application's {@link RedisConnectionFactory} (or, when
 * that factory is not Lettuce's, on a Lettuce client of Lockstep's own opened where a
 * Jedis factory points, else from Spring Boot's {@link DataRedisConnectionDetails}, and
 * closed with the context; without lettuce-core start-up fails saying what Lockstep
 * needs) or, when {@code lockstep.redlock.nodes} lists independent masters, on Redlock
 * across them; the {@code @DistributedLock} advice, and the transaction guard. With
 * {@code lockstep.enabled=false} the template is a JVM-local {@link LocalLockTemplate}
 * (no Redis; one WARN says locks are not distributed), so applications and tests keep
 * working. Backs off from a user-defined {@link LockTemplate}.
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class)
@Conditional(LockstepAutoConfiguration.OnLocksAvailable.class)
@EnableConfigurationProperties(LockstepProperties.class)
@Import(LockstepAutoConfiguration.AutoProxyRegistrar.class)
public final class LockstepAutoConfiguration {

	private static final Logger logger = LoggerFactory.getLogger(LockstepAutoConfiguration.class);

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static DistributedLockAdvisor distributedLockAdvisor(ObjectProvider<LockTemplate> locks, Environment environment) {
		DistributedLockAdvisor advisor = new DistributedLockAdvisor(locks::getObject);
		advisor.setOrder(Binder.get(environment)
			.bind("lockstep.aspect-order", Integer.class)
			.orElse(DistributedLockAdvisor.DEFAULT_ORDER));
		return advisor;
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static HeldLocksTransactionListener heldLocksTransactionListener() {
		return new HeldLocksTransactionListener();
	}

	@Bean
	UnusedLockNames lockstepUnusedLockNames(LockstepProperties properties) {
		return new UnusedLockNames(properties);
	}

	@Bean
	LockClientWarmUp lockstepLockClientWarmUp(ObjectProvider<LockTemplate> locks) {
		return new LockClientWarmUp(locks);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "lockstep.enabled", matchIfMissing = true)
	@ConditionalOnBean(RedisConnectionFactory.class)
	@Conditional(NoRedlockNodes.class)
	static class RedisLocks {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean(LockTemplate.class)
		LockstepRedisClient lockstepRedisClient(RedisConnectionFactory connectionFactory,
				ObjectProvider<DataRedisConnectionDetails> connectionDetails,
				ObjectProvider<DataRedisProperties> redisProperties, ResourceLoader resourceLoader) {
			if (!ClassUtils.isPresent("io.lettuce.core.RedisClient", resourceLoader.getClassLoader())) {
				throw new LockConfigurationException(
						"Lockstep locks through Lettuce (io.lettuce:lettuce-core), "
								+ "which is not on the classpath; the application's RedisConnectionFactory is a "
								+ connectionFactory.getClass().getSimpleName()
								+ ". Spring Boot's recipe for Jedis excludes lettuce-core, which Lockstep still needs: "
								+ "it opens a Lettuce client of its own where the Jedis factory points.",
						"Keep io.lettuce:lettuce-core on the classpath (do not exclude it from "
								+ "spring-boot-starter-data-redis or lockstep-spring-boot-starter), add "
								+ "redis.clients:jedis, and set spring.data.redis.client-type=jedis: the application "
								+ "then runs on Jedis and Lockstep on its own Lettuce client.");
			}
			return LockstepRedisClient.of(connectionFactory, connectionDetails, redisProperties.getIfAvailable());
		}

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean(LockTemplate.class)
		RedisLockTemplate lockTemplate(LockstepRedisClient client, LockstepProperties properties,
				ApplicationEventPublisher events, ObjectProvider<LockLostListener> listeners,
				ObjectProvider<RedisLockTemplateBuilderCustomizer> customizers, Environment environment,
				ObjectProvider<DataRedisProperties> redisProperties) {
			LockstepProperties.Replication replication = properties.getReplication();
			DataRedisProperties redis = redisProperties.getIfAvailable();
			RedisLockTemplateBuilder builder = client.builder()
				.commandTimeout(CommandTimeout.of(properties, (redis != null) ? redis.getTimeout() : null));
			checked(() -> builder.replicaAcknowledgements(replication.getAcknowledgements(), replication.getTimeout()));
			configure(builder, properties, events, listeners, environment);
			customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
			return checked(builder::build);
		}

	}

	/**
	 * Redlock across the masters of {@code lockstep.redlock.nodes}, instead of the single
	 * Redis of {@code spring.data.redis.*} (no connection factory needed).
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "lockstep.enabled", matchIfMissing = true)
	@Conditional(OnRedlockNodes.class)
	static class RedlockLocks {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean(LockTemplate.class)
		RedisLockTemplate lockTemplate(LockstepProperties properties, ApplicationEventPublisher events,
				ObjectProvider<LockLostListener> listeners,
				ObjectProvider<RedisLockTemplateBuilderCustomizer> customizers, Environment environment) {
			// spring.data.redis.timeout is the single Redis's, not the Redlock nodes'
			RedisLockTemplateBuilder builder = RedlockFactory.redlock(properties.getRedlock())
				.builder()
				.commandTimeout(CommandTimeout.of(properties, null));
			configure(builder, properties, events, listeners, environment);
			customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
			return checked(builder::build);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "lockstep.enabled", havingValue = false)
	static class LocalLocks {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean(LockTemplate.class)
		LocalLockTemplate lockTemplate(LockstepProperties properties, ApplicationEventPublisher events,
				ObjectProvider<LockLostListener> listeners, ObjectProvider<ObservationRegistry> observationRegistry,
				ObjectProvider<LockObservationConvention> convention, Environment environment) {
			logger.warn("lockstep.enabled=false: locks are JVM-local and do NOT exclude other instances of this "
					+ "application; LockTemplate and @DistributedLock work within this JVM only");
			LocalLockTemplate.Builder builder = LocalLockTemplate.builder();
			configure(builder, properties, events, listeners, environment);
			observationRegistry
				.ifAvailable((registry) -> builder.observationRegistry(registry, convention.getIfAvailable()));
			return checked(builder::build);
		}

	}

	/**
	 * Runs a step of building the template; a value the template refuses fails start-up
	 * naming it, with what to do.
	 */
	private static <T> T checked(Supplier<T> step) {
		try {
			return step.get();
		}
		catch (IllegalArgumentException ex) {
			throw new LockConfigurationException("Invalid lockstep.* properties: " + ex.getMessage(),
					"Correct the value named above in the lockstep.* properties of the application's configuration "
							+ "(a name in quotes such as 'leaseTime' is lockstep.lease-time, 'locks.<name>.lease-time' "
							+ "is lockstep.locks.<name>.lease-time).",
					ex);
		}
	}

	private static void configure(LockTemplateBuilder<?, ?> builder, LockstepProperties properties,
			ApplicationEventPublisher events, ObjectProvider<LockLostListener> listeners, Environment environment) {
		// spring.threads.virtual.enabled (JDK 21+): the threads Lockstep starts for work
		// that may block run as virtual threads; its timers and watchdog stay platform
		// threads
		builder.virtualThreads(Threading.VIRTUAL.isActive(environment));
		checked(() -> builder.keyPrefix(properties.getKeyPrefix())
			.waitTime(properties.getWaitTime())
			.leaseTime(properties.getLeaseTime())
			.maxHoldTime(properties.getMaxHoldTime())
			.interruptOnLeaseLost(properties.getOnLeaseLost() == LockstepProperties.OnLeaseLost.INTERRUPT)
			.lockLostListener(events::publishEvent));
		listeners.orderedStream().forEach(builder::lockLostListener);
		checked(() -> builder.lockDelay(properties.getLockDelay()));
		properties.getLocks().forEach((name, lock) -> {
			checked(() -> builder.lockOverride(name, lock.getWaitTime(), lock.getLeaseTime(), lock.getMinHoldTime()));
			Duration lockDelay = lock.getLockDelay();
			if (lockDelay != null) {
				checked(() -> builder.lockDelay(name, lockDelay));
			}
		});
	}

	/**
	 * Locks are available with a Redis connection factory, or JVM-local with
	 * {@code lockstep.enabled=false}.
	 */
	static class OnLocksAvailable extends AnyNestedCondition {

		OnLocksAvailable() {
			super(ConfigurationCondition.ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnBooleanProperty(name = "lockstep.enabled", havingValue = false)
		static class Disabled {

		}

		@ConditionalOnBooleanProperty(name = "lockstep.enabled", matchIfMissing = true)
		@ConditionalOnBean(RedisConnectionFactory.class)
		static class RedisPresent {

		}

		@ConditionalOnBooleanProperty(name = "lockstep.enabled", matchIfMissing = true)
		@Conditional(OnRedlockNodes.class)
		static class RedlockNodesSet {

		}

	}

	/** {@code lockstep.redlock.nodes} lists at least one node. */
	static class OnRedlockNodes extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			List<String> nodes = Binder.get(context.getEnvironment())
				.bind("lockstep.redlock.nodes", Bindable.listOf(String.class))
				.orElse(List.of());
			return nodes.isEmpty() ? ConditionOutcome.noMatch("lockstep.redlock.nodes is empty")
					: ConditionOutcome.match("lockstep.redlock.nodes lists " + nodes.size() + " node(s)");
		}

	}

	/** {@code lockstep.redlock.nodes} is empty: the single Redis master. */
	static class NoRedlockNodes extends NoneNestedConditions {

		NoRedlockNodes() {
			super(ConfigurationCondition.ConfigurationPhase.PARSE_CONFIGURATION);
		}

		@Conditional(OnRedlockNodes.class)
		static class RedlockNodesSet {

		}

	}

	/**
	 * Registers Spring's infrastructure auto-proxy creator unless one is present (Spring
	 * Boot's AOP auto-configuration registers a more capable one), so that the advice
	 * applies also with {@code spring.aop.auto=false}.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		}

	}

}

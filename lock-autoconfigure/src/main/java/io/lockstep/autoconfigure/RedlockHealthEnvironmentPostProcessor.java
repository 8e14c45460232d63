package io.lockstep.autoconfigure;

import java.util.List;
import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * With Redlock ({@code lockstep.redlock.nodes}) and no Redis of the application's own
 * ({@code spring.data.redis.*} names no server), turns Spring Boot's {@code redis} health
 * indicator off by default ({@code management.health.redis.enabled=false}, at the lowest
 * precedence). The starter brings Spring Data Redis, whose auto-configured connection
 * factory points at {@code localhost:6379} when nothing is configured; its indicator
 * would report the application DOWN because of a server nobody asked for, while the locks
 * work. The {@code lockstep} indicator checks the Redlock nodes instead. Any
 * {@code management.health.redis.enabled} the application sets wins.
 */
class RedlockHealthEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	static final String PROPERTY_SOURCE = "lockstepRedlockDefaults";

	/** The properties that name a Redis of the application's own. */
	private static final List<String> REDIS_CONNECTION = List.of("spring.data.redis.url", "spring.data.redis.host",
			"spring.data.redis.port", "spring.data.redis.username", "spring.data.redis.password",
			"spring.data.redis.database", "spring.data.redis.sentinel.master", "spring.data.redis.sentinel.nodes",
			"spring.data.redis.cluster.nodes", "spring.data.redis.ssl.enabled", "spring.data.redis.ssl.bundle");

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		Binder binder = Binder.get(environment);
		if (!binder.bind("lockstep.enabled", Boolean.class).orElse(true)
				|| binder.bind("lockstep.redlock.nodes", Bindable.listOf(String.class)).orElse(List.of()).isEmpty()
				|| REDIS_CONNECTION.stream().anyMatch((name) -> binder.bind(name, String.class).isBound())) {
			return;
		}
		environment.getPropertySources()
			.addLast(new MapPropertySource(PROPERTY_SOURCE, Map.of("management.health.redis.enabled", "false")));
	}

	/** After the application's configuration files are loaded. */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}

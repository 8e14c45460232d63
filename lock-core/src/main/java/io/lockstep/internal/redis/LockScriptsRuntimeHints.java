package io.lockstep.internal.redis;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The Lua scripts and their libraries ({@code lib*.lua}) that {@link ScriptTexts} reads
 * from the class path: resources a native image must include. Registered in
 * {@code META-INF/spring/aot.factories}.
 */
class LockScriptsRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
		hints.resources().registerPattern("io/lockstep/redis/*.lua");
	}

}

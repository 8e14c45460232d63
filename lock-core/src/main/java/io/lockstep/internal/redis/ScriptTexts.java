package io.lockstep.internal.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Reads the Lua scripts' files, once each, when {@link LockScripts} is initialized: a
 * script made from the resource itself would read the file again for every EVAL after a
 * NOSCRIPT, on the client's I/O thread.
 */
final class ScriptTexts {

	private ScriptTexts() {
	}

	static <T> RedisScript<T> of(String name, Class<T> type) {
		return RedisScript.of(text(name), type);
	}

	/**
	 * A script that reads shared holders: {@code holders.lua}'s functions, then the
	 * script's own text.
	 */
	static <T> RedisScript<T> withHolders(String name, Class<T> type) {
		return RedisScript.of(text("holders") + text(name), type);
	}

	private static String text(String name) {
		ClassPathResource resource = new ClassPathResource("io/lockstep/redis/" + name + ".lua");
		try {
			return resource.getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read " + resource, ex);
		}
	}

}

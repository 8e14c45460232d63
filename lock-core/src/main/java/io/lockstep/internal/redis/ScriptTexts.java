package io.lockstep.internal.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Reads the Lua scripts' files, once each, when {@link LockScripts} is initialized: a
 * script made from the resource itself would read the file again for every EVAL after a
 * NOSCRIPT, on the client's I/O thread.
 * <p>
 * The scripts' shared functions are defined once, in libraries: {@code lib.lua} for every
 * script, and {@code lib-acquire.lua}, {@code lib-shared.lua}, {@code lib-queue.lua},
 * {@code lib-release.lua} for the scripts that acquire, read shared holders, read waiter
 * queues, or release. They are prepended to each script that calls them: Redis 6.2, the
 * embedded fallback, has no {@code FUNCTION LOAD}, so prepending is the one way to share
 * them (the one place a script is made of more than one file). A script gets only the
 * libraries it calls: Redis defines every function of the text again on each run, which
 * is also why the acquire and release scripts begin with their commonest case
 * ({@code acquire-plain.lua}: a free key, or a waiter's first attempt that queues behind
 * another owner's exclusive hold; {@code release-plain.lua}: one plain key of its owner,
 * freed or handed to a successor the release names, a key of its owner handed to the
 * first waiter of its queue, or a reader that leaves other readers), which returns before
 * any library function is defined. Redis numbers the lines of the whole text;
 * {@link #explain} turns its {@code user_script:<line>} back into the file and line.
 */
final class ScriptTexts {

	private static final Pattern SHA = Pattern.compile("[0-9a-f]{40}");

	private static final Pattern LINE = Pattern.compile("user_script:(\\d+)");

	/** The files of each script, by its SHA-1. */
	private static final Map<String, List<File>> FILES = new ConcurrentHashMap<>();

	private ScriptTexts() {
	}

	/**
	 * A script made of files, each {@code io/lockstep/redis/<name>.lua}: the libraries it
	 * calls, then the script itself.
	 */
	static <T> RedisScript<T> of(Class<T> type, String... names) {
		StringBuilder text = new StringBuilder();
		List<File> files = new java.util.ArrayList<>();
		int line = 0;
		for (String name : names) {
			String file = text(name);
			if (!file.endsWith("\n")) {
				file = file + "\n";
			}
			files.add(new File(name + ".lua", line));
			line += (int) file.chars().filter((c) -> c == '\n').count();
			text.append(file);
		}
		RedisScript<T> script = new Text<>(text.toString(), type);
		FILES.put(script.getSha1(), List.copyOf(files));
		return script;
	}

	/**
	 * A Redis error message with the file and line of the script it names
	 * ({@code user_script:150} of a script made with {@link #of} becomes
	 * {@code user_script:150 (acquire.lua:26)}); other messages as they are.
	 */
	static @Nullable String explain(@Nullable String message) {
		if (message == null) {
			return null;
		}
		Matcher sha = SHA.matcher(message);
		List<File> files = sha.find() ? FILES.get(sha.group()) : null;
		Matcher line = LINE.matcher(message);
		if (files == null || !line.find()) {
			return message;
		}
		int at = Integer.parseInt(line.group(1)) - 1;
		File in = files.get(0);
		for (File file : files) {
			if (file.start() <= at) {
				in = file;
			}
		}
		return message + " (" + in.name() + ":" + (at - in.start() + 1) + ")";
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

	/** One file of a script: its name and the 0-based line of the text it starts on. */
	private record File(String name, int start) {
	}

	/**
	 * A script's text, its result type and its SHA-1, worked out once: the SHA-1 is read
	 * for every EVALSHA, and {@link RedisScript#of}'s script takes a lock to read it.
	 */
	private static final class Text<T> implements RedisScript<T> {

		private final String text;

		private final Class<T> type;

		private final String sha1;

		Text(String text, Class<T> type) {
			this.text = text;
			this.type = type;
			this.sha1 = RedisScript.of(text, type).getSha1();
		}

		@Override
		public String getSha1() {
			return this.sha1;
		}

		@Override
		public Class<T> getResultType() {
			return this.type;
		}

		@Override
		public String getScriptAsString() {
			return this.text;
		}

	}

}

package io.lockstep.internal.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scripts as {@link ScriptTexts} assembles them, without Redis: each is given the
 * library functions it calls, and a Redis error's line maps back to its file.
 */
class ScriptTextsTests {

	private static final List<String> LIBRARIES = List.of("lib", "lib-acquire", "lib-shared", "lib-queue",
			"lib-release");

	private static final Pattern DEFINED = Pattern.compile("(?m)^local function (\\w+)\\(|^local (\\w+) = ");

	private static final Pattern CALLED = Pattern.compile("(?<![\\w.:])(\\w+)\\(|\\b([A-Z][A-Z_]+)\\b");

	private static Map<String, RedisScript<?>> scripts() {
		Map<String, RedisScript<?>> scripts = new LinkedHashMap<>();
		scripts.put("acquire", LockScripts.ACQUIRE);
		scripts.put("acquire-all", LockScripts.ACQUIRE_ALL);
		scripts.put("acquire-shared", LockScripts.ACQUIRE_SHARED);
		scripts.put("release", LockScripts.RELEASE);
		scripts.put("leave", LockScripts.LEAVE);
		scripts.put("delete", LockScripts.DELETE);
		scripts.put("renew", LockScripts.RENEW);
		scripts.put("keep", LockScripts.KEEP);
		scripts.put("check", LockScripts.CHECK);
		scripts.put("raise-fence", LockScripts.RAISE_FENCE);
		return scripts;
	}

	private static String file(String name) throws IOException {
		return new ClassPathResource("io/lockstep/redis/" + name + ".lua").getContentAsString(StandardCharsets.UTF_8);
	}

	private static Set<String> defined(String text) {
		Set<String> names = new TreeSet<>();
		Matcher matcher = DEFINED.matcher(text);
		while (matcher.find()) {
			names.add((matcher.group(1) != null) ? matcher.group(1) : matcher.group(2));
		}
		return names;
	}

	/** The code of a text: its comments taken out. */
	private static String code(String text) {
		return text.replaceAll("--[^\\n]*", "");
	}

	@Test
	void everyScriptIsGivenTheLibraryFunctionsAndReplyCodesItCalls() throws IOException {
		Set<String> library = new TreeSet<>();
		for (String name : LIBRARIES) {
			library.addAll(defined(file(name)));
		}
		int checked = 0;
		for (Map.Entry<String, RedisScript<?>> script : scripts().entrySet()) {
			String text = script.getValue().getScriptAsString();
			Set<String> given = defined(text);
			Set<String> missing = new TreeSet<>();
			Matcher called = CALLED.matcher(code(text));
			while (called.find()) {
				String name = (called.group(1) != null) ? called.group(1) : called.group(2);
				if (library.contains(name) && !given.contains(name)) {
					missing.add(name);
				}
				checked++;
			}
			assertThat(missing).as("library functions %s.lua calls but is not given", script.getKey()).isEmpty();
		}
		System.out.printf("%d scripts, %d library names, %d calls and names checked%n", scripts().size(),
				library.size(), checked);
		assertThat(library).contains("serverMillis", "nextFence", "ownedBy", "firstLive", "ACQUIRED");
	}

	@Test
	void thePlainAcquireAndReleaseReturnBeforeTheLibrariesAreDefined() {
		for (RedisScript<?> script : List.of(LockScripts.ACQUIRE, LockScripts.RELEASE)) {
			String text = script.getScriptAsString();
			int plainReturn = text.indexOf("return ");
			int firstFunction = text.indexOf("local function ");
			assertThat(plainReturn).as("the plain path's return").isPositive();
			assertThat(plainReturn).as("the plain path returns before the first library function is defined")
				.isLessThan(firstFunction);
		}
	}

	@Test
	void theReleaseScriptsStayUnder120Lines() throws IOException {
		for (String name : List.of("release", "leave", "delete")) {
			assertThat(file(name).lines().count()).as(name + ".lua").isLessThan(120);
		}
	}

	@Test
	void aRedisErrorLineIsMappedBackToItsFile() throws IOException {
		int plain = (int) file("acquire-plain").lines().count();
		int lib = (int) (plain + file("lib").lines().count() + file("lib-acquire").lines().count());
		String sha = LockScripts.ACQUIRE.getSha1();
		String inScript = "ERR user_script:" + (lib + 5) + ": attempt to compare nil with number script: " + sha
				+ ", on @user_script:" + (lib + 5) + ".";
		assertThat(ScriptTexts.explain(inScript)).endsWith(" (acquire.lua:5)");
		String inLibrary = "ERR Error running script (call to f_" + sha + "): @user_script:" + (plain + 3) + ": boom";
		assertThat(ScriptTexts.explain(inLibrary)).endsWith(" (lib.lua:3)");
		String other = "ERR unknown command 'FOO'";
		assertThat(ScriptTexts.explain(other)).isEqualTo(other);
	}

}

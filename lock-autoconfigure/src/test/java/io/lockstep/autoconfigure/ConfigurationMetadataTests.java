package io.lockstep.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import org.springframework.beans.BeanUtils;
import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads the generated {@code spring-configuration-metadata.json} as an IDE would.
 */
class ConfigurationMetadataTests {

	@Test
	void everyLockstepPropertyOfTheContractHasADescription() throws IOException {
		List<Map<String, Object>> all = JsonPath.read(metadata(), "$.properties[*]");
		List<Map<String, Object>> properties = all.stream()
			.filter((property) -> property.get("name").toString().startsWith("lockstep."))
			.toList();
		assertThat(all).extracting((property) -> property.get("name"))
			.as("the locks endpoint's own settings")
			.contains("management.endpoint.locks.access");
		assertThat(properties).extracting((property) -> property.get("name"))
			.containsExactlyInAnyOrder("lockstep.enabled", "lockstep.key-prefix", "lockstep.wait-time",
					"lockstep.lease-time", "lockstep.command-timeout", "lockstep.aspect-order",
					"lockstep.max-hold-time", "lockstep.on-lease-lost", "lockstep.locks", "lockstep.locks.*.wait-time",
					"lockstep.locks.*.lease-time", "lockstep.locks.*.min-hold-time", "lockstep.locks.*.lock-delay",
					"lockstep.lock-delay", "lockstep.redlock.nodes", "lockstep.redlock.clock-drift-factor",
					"lockstep.redlock.node-timeout", "lockstep.replication.acknowledgements",
					"lockstep.replication.timeout", "lockstep.web.problem-details");
		assertThat(properties).allSatisfy(
				(property) -> assertThat(property.get("description")).as("description of %s", property.get("name"))
					.asString()
					.isNotBlank()
					.endsWith("."));
	}

	/**
	 * The processor describes {@code lockstep.locks} only as a map: each setting of a
	 * lock name is described by hand
	 * ({@code additional-spring-configuration-metadata.json}), and a setting added to
	 * {@link LockstepProperties.Lock} without its entry fails here.
	 */
	@Test
	void everySettingOfALockNameIsDescribed() throws IOException {
		String metadata = metadata();
		List<String> settings = Arrays.stream(BeanUtils.getPropertyDescriptors(LockstepProperties.Lock.class))
			.filter((property) -> property.getWriteMethod() != null)
			.map((property) -> "lockstep.locks.*." + toDashed(property.getName()))
			.toList();
		assertThat(settings).contains("lockstep.locks.*.wait-time", "lockstep.locks.*.lease-time");
		for (String name : settings) {
			List<Map<String, Object>> entries = JsonPath.read(metadata, "$.properties[?(@.name == '" + name + "')]");
			assertThat(entries).as("metadata of %s", name).singleElement().satisfies((entry) -> {
				assertThat(entry.get("type")).isEqualTo("java.time.Duration");
				assertThat(entry.get("description")).asString().contains(name.replace("*", "<name>")).endsWith(".");
			});
		}
	}

	private static String toDashed(String camelCase) {
		return camelCase.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
	}

	@Test
	void perLockNameSettingsAreNamedInTheDescriptionOfLocks() throws IOException {
		List<Object> description = JsonPath.read(metadata(), "$.properties[?(@.name == 'lockstep.locks')].description");
		assertThat(description).singleElement()
			.asString()
			.contains("wait-time", "lease-time", "min-hold-time", "lock-delay");
	}

	@Test
	void defaultsAreDocumented() throws IOException {
		String metadata = metadata();
		assertThat(
				(List<Object>) JsonPath.read(metadata, "$.properties[?(@.name == 'lockstep.wait-time')].defaultValue"))
			.containsExactly("5s");
		assertThat(
				(List<Object>) JsonPath.read(metadata, "$.properties[?(@.name == 'lockstep.lease-time')].defaultValue"))
			.containsExactly("30s");
		assertThat((List<Object>) JsonPath.read(metadata,
				"$.properties[?(@.name == 'lockstep.aspect-order')].defaultValue"))
			.containsExactly(Integer.MAX_VALUE - 100);
		assertThat((List<Object>) JsonPath.read(metadata,
				"$.properties[?(@.name == 'lockstep.on-lease-lost')].defaultValue"))
			.containsExactly("notify");
		assertThat((List<Object>) JsonPath.read(metadata,
				"$.properties[?(@.name == 'lockstep.redlock.clock-drift-factor')].defaultValue"))
			.containsExactly(0.01);
		assertThat((List<Object>) JsonPath.read(metadata,
				"$.properties[?(@.name == 'lockstep.redlock.node-timeout')].defaultValue"))
			.containsExactly("200ms");
	}

	private static String metadata() throws IOException {
		try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

}

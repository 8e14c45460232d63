package io.lockstep;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

class ArchitectureTests {

	private static final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
		.importPackages("io.lockstep");

	/** One slice per package, the root package {@code io.lockstep} included. */
	private static final SliceAssignment byPackage = new SliceAssignment() {

		@Override
		public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
			String name = javaClass.getPackageName();
			return (name.equals("io.lockstep") || name.startsWith("io.lockstep.")) ? SliceIdentifier.of(name)
					: SliceIdentifier.ignore();
		}

		@Override
		public String getDescription() {
			return "packages of io.lockstep";
		}

	};

	/**
	 * One slice per top-level class (nested classes belong to it), and a builder to what
	 * it builds ({@code RedisLockTemplateBuilder} to {@code RedisLockTemplate}): a type
	 * and its builder name each other by design.
	 */
	private static final SliceAssignment byClass = new SliceAssignment() {

		@Override
		public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
			if (!javaClass.getPackageName().startsWith("io.lockstep")) {
				return SliceIdentifier.ignore();
			}
			String name = javaClass.getName();
			int nested = name.indexOf('$');
			String topLevel = (nested >= 0) ? name.substring(0, nested) : name;
			if (topLevel.endsWith("Builder")
					&& classes.contain(topLevel.substring(0, topLevel.length() - "Builder".length()))) {
				topLevel = topLevel.substring(0, topLevel.length() - "Builder".length());
			}
			return SliceIdentifier.of(topLevel);
		}

		@Override
		public String getDescription() {
			return "top-level classes of io.lockstep";
		}

	};

	/** The packages whose public types are the API. */
	private static final String[] PUBLIC_PACKAGES = { "io.lockstep", "io.lockstep.redis", "io.lockstep.redlock",
			"io.lockstep.local" };

	@Test
	void classesHaveNoCycles() {
		slices().assignedFrom(byClass).should().beFreeOfCycles().check(classes);
	}

	@Test
	void noPublicSignatureOfTheApiNamesAnInternalType() {
		List<String> violations = new ArrayList<>();
		for (JavaClass type : classes) {
			if (!isApi(type)) {
				continue;
			}
			type.getRawSuperclass()
				.filter(ArchitectureTests::isInternal)
				.ifPresent((superclass) -> violations.add(type.getName() + " extends " + superclass.getName()));
			type.getRawInterfaces()
				.stream()
				.filter(ArchitectureTests::isInternal)
				.forEach((api) -> violations.add(type.getName() + " implements " + api.getName()));
			for (JavaMember member : type.getAllMembers()) {
				if (!member.getModifiers().contains(JavaModifier.PUBLIC)
						&& !member.getModifiers().contains(JavaModifier.PROTECTED)) {
					continue;
				}
				signatureTypes(member).stream()
					.filter(ArchitectureTests::isInternal)
					.forEach((internal) -> violations.add(member.getFullName() + " names " + internal.getName()));
			}
		}
		System.out.printf("public API: %d public types of %s checked; internal types in their signatures: %s%n",
				classes.stream().filter(ArchitectureTests::isApi).count(), List.of(PUBLIC_PACKAGES), violations);
		assertThat(violations).isEmpty();
	}

	private static boolean isApi(JavaClass type) {
		return List.of(PUBLIC_PACKAGES).contains(type.getPackageName())
				&& type.getModifiers().contains(JavaModifier.PUBLIC) && !type.isAnonymousClass()
				&& (!type.isNestedClass() || type.getEnclosingClass().map(ArchitectureTests::isApi).orElse(false));
	}

	private static boolean isInternal(JavaClass type) {
		return type.getPackageName().startsWith("io.lockstep.internal");
	}

	/**
	 * The raw types a member's signature names: its type, parameters and their type
	 * arguments.
	 */
	private static Set<JavaClass> signatureTypes(JavaMember member) {
		Set<JavaClass> types = new LinkedHashSet<>();
		if (member instanceof JavaField field) {
			types.addAll(field.getType().getAllInvolvedRawTypes());
		}
		if (member instanceof JavaCodeUnit code) {
			types.addAll(code.getReturnType().getAllInvolvedRawTypes());
			code.getParameterTypes().forEach((parameter) -> types.addAll(parameter.getAllInvolvedRawTypes()));
		}
		return types;
	}

	@Test
	void coreNeverDependsOnSpringBoot() {
		noClasses().should().dependOnClassesThat().resideInAPackage("org.springframework.boot..").check(classes);
	}

	@Test
	void packagesHaveNoCycles() {
		slices().assignedFrom(byPackage).should().beFreeOfCycles().check(classes);
	}

	@Test
	void coreNeverWritesToStandardOutput() {
		noClasses().should()
			.accessField(System.class, "out")
			.orShould()
			.accessField(System.class, "err")
			.because("library code logs through SLF4J")
			.check(classes);
	}

	@Test
	void onlyTheApiPackageAndTheBuilderArePublic() {
		noClasses().that()
			.resideInAPackage("io.lockstep.redis")
			.and()
			.doNotHaveSimpleName("RedisLockTemplate")
			.and()
			.doNotHaveSimpleName("RedisLockTemplateBuilder")
			.should()
			.bePublic()
			.check(classes);
	}

	@Test
	void onlyTheEntryPointIsPublicInTheRedlockPackage() {
		noClasses().that()
			.resideInAPackage("io.lockstep.redlock")
			.and()
			.doNotHaveSimpleName("Redlock")
			.should()
			.bePublic()
			.check(classes);
	}

	@Test
	void onlyWhatAutoConfigurationConstructsIsPublicInTheInterceptorPackage() {
		noClasses().that()
			.resideInAPackage("io.lockstep.interceptor")
			.and()
			.doNotHaveSimpleName("DistributedLockAdvisor")
			.and()
			.doNotHaveSimpleName("HeldLocksTransactionListener")
			.should()
			.bePublic()
			.check(classes);
	}

}

package io.lockstep;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
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

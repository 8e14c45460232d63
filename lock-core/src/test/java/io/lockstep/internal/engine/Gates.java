package io.lockstep.internal.engine;

/** Asking gates for a pure {@link Acquisition}, as a driver's local queues answer. */
final class Gates {

	/** The key's first local caller, which hears hand-offs already. */
	static final Acquisition.Gate FIRST = new Acquisition.Gate((key) -> true, (key) -> true);

	/** The key's first local caller, whose client does not hear hand-offs yet. */
	static final Acquisition.Gate FIRST_NOT_HEARING = new Acquisition.Gate((key) -> true, (key) -> false);

	/** Another local caller asks for or waits for the key. */
	static final Acquisition.Gate TAKEN = new Acquisition.Gate((key) -> false, (key) -> false);

	private Gates() {
	}

}

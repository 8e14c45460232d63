package io.lockstep.internal.engine;

/** Asking gates for a pure {@link Acquisition}, as a driver's local queues answer. */
enum Gates implements Acquisition.Gate {

	/** The key's first local caller, which hears hand-offs already. */
	FIRST(true, true),

	/** The key's first local caller, whose client does not hear hand-offs yet. */
	FIRST_NOT_HEARING(true, false),

	/** Another local caller asks for or waits for the key. */
	TAKEN(false, false);

	private final boolean begins;

	private final boolean hears;

	Gates(boolean begins, boolean hears) {
		this.begins = begins;
		this.hears = hears;
	}

	@Override
	public boolean begin(String key) {
		return this.begins;
	}

	@Override
	public boolean hearsHandOffs(String key) {
		return this.hears;
	}

}

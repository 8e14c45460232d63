package io.lockstep.internal.engine;

import java.util.function.Consumer;

/**
 * The guarded call on its thread: interrupted for a lost lease only while it runs, never
 * after it ended. A call bound to no thread (asynchronous) is never interrupted; it is
 * told of a loss instead.
 */
final class CallFrame {

	private final Thread thread;

	private boolean ended;

	private boolean interrupted;

	private Consumer<String> lossAction;

	private boolean lost;

	CallFrame(Thread thread) {
		this.thread = thread;
	}

	Thread thread() {
		return this.thread;
	}

	synchronized boolean isEnded() {
		return this.ended;
	}

	synchronized boolean interrupted() {
		return this.interrupted;
	}

	synchronized void onLoss(Consumer<String> action) {
		this.lossAction = action;
	}

	/** A lease of the call was lost: tells the loss action once, unless ended. */
	void lost(String reason) {
		Consumer<String> action;
		synchronized (this) {
			if (this.ended || this.lost || this.lossAction == null) {
				return;
			}
			this.lost = true;
			action = this.lossAction;
		}
		action.accept(reason);
	}

	/** Interrupts the call's thread unless the call ended. */
	synchronized void interrupt() {
		if (this.thread != null && !this.ended && !this.interrupted) {
			this.interrupted = true;
			this.thread.interrupt();
		}
	}

	/** Ends the call; true when the library had interrupted it. */
	synchronized boolean end() {
		this.ended = true;
		return this.interrupted;
	}

}

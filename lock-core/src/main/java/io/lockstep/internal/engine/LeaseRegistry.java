package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongUnaryOperator;

import io.lockstep.LockInfo;
import io.micrometer.observation.Observation;

/**
 * The registry of an engine's leases, from grant to end: it creates the lease of a grant
 * and hands it to the {@link Watchdog}, and reacts to every lease that ends (leaves the
 * registry, stops its observation, reports a loss to the call and the loss events).
 */
final class LeaseRegistry implements Lease.Transitions {

	private final Set<Lease> leases = ConcurrentHashMap.newKeySet();

	private final LockObservations observations;

	private final LeaseEvents events;

	private final Watchdog watchdog;

	private final LongUnaryOperator driftNanos;

	/**
	 * @param driftNanos the store's clock-drift allowance of a lease
	 */
	LeaseRegistry(LockStore store, LockObservations observations, LeaseEvents events) {
		this.observations = observations;
		this.events = events;
		this.driftNanos = store::driftNanos;
		this.watchdog = new Watchdog(store, this.leases);
	}

	/**
	 * Creates and registers the lease of a grant; the watchdog takes it.
	 * @param request the request granted (the keys acquired)
	 * @param grant the grant; its lease starts at its {@code sentNanos} at the latest
	 * (the send time of the attempt it answers, or of one before it)
	 */
	Lease granted(LockRequest request, Acquisition.Grant grant) {
		Observation held = this.observations.startHeld(request.id().display(), request.lockName(),
				grant.fencingTokens()[0]);
		Lease lease = new Lease(request, grant, held, this, this.driftNanos);
		this.leases.add(lease);
		this.watchdog.wake(lease);
		return lease;
	}

	@Override
	public void ended(Lease lease, Lease.State from, Lease.State to, String reason) {
		this.leases.remove(lease);
		this.observations.stopHeld(lease.observation());
		if (to == Lease.State.LOST) {
			lease.calls().forEach((call) -> call.lost(reason));
			this.events.lost(lease, reason);
		}
	}

	/** The leases held now, oldest first. */
	List<LockInfo> held() {
		long now = System.nanoTime();
		return this.leases.stream()
			.filter((lease) -> lease.state() == Lease.State.HELD)
			.sorted(Comparator.comparing(Lease::acquiredAt))
			.map((lease) -> new LockInfo(lease.id().display(), lease.lockName(), lease.fencingToken(lease.id().first()),
					lease.acquiredAt(), Duration.ofNanos(Math.max(0, lease.deadlineNanos() - now)), lease.renewed(),
					lease.holderThread(), lease.depth(), lease.id().sharing().mode(), lease.id().sharing().permits()))
			.toList();
	}

	/** Leases in the registry (held or being released). */
	int registered() {
		return this.leases.size();
	}

	Watchdog watchdog() {
		return this.watchdog;
	}

	/** Stops renewing; every lease left is abandoned (it expires on its own). */
	void close() {
		this.watchdog.close();
		for (Lease lease : List.copyOf(this.leases)) {
			lease.abandon("the lock client was closed");
		}
	}

}

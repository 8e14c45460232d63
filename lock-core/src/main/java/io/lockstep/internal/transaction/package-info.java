/**
 * Internal support binding a lock's release to a Spring transaction; not API.
 */
package io.lockstep.internal.transaction;

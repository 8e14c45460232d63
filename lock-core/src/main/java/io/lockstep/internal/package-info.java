/**
 * Internal support shared by Lockstep's packages; not API.
 */
package io.lockstep.internal;

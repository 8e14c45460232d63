/**
 * Spring Boot auto-configuration of Lockstep and its {@code lockstep.*} properties.
 */
@NullMarked
package io.lockstep.autoconfigure;

import org.jspecify.annotations.NullMarked;

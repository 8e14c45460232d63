/**
 * Spring Boot auto-configuration of Lockstep and its {@code lockstep.*} properties.
 */
package io.lockstep.autoconfigure;

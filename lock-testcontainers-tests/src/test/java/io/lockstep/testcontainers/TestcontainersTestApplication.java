package io.lockstep.testcontainers;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The smallest Spring Boot application using the Lockstep starter; its Redis comes from
 * {@code spring.data.redis.*}.
 */
@SpringBootApplication
class TestcontainersTestApplication {

}

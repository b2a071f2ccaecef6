/// Parses a port number from the environment.
pub fn port_from_env() -> u16 {
    std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080)
}

fn half_written(x: u32 -> {
    let y = x +
}}} ]]

/// Still found after the syntax error above.
pub fn retry_delay_ms(attempt: u32) -> u64 {
    250 * u64::from(attempt.min(8))
}

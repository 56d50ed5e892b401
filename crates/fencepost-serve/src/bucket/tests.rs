use super::*;
use fencepost_core::clock::Instant;

#[test]
fn a_future_instant_caps_the_pointer_a_just_past_one_makes_it_hot_a_long_past_one_caps_nothing() {
    let s = Settings {
        pointer_ttl_ms: 1000,
        pointer_hot_ms: 100,
        blob_cache_bytes: 0,
        bucket_timeout_ms: 0,
    };
    let now = Instant(1_000_000);
    let ms = Duration::from_millis;
    // (next_change_at, the TTL)
    let table = [
        (None, ms(1000)),
        (Some(1_000_250), ms(250)),
        (Some(1_000_050), ms(50)),
        (Some(1_000_000), ms(100)),
        (Some(999_000), ms(100)),
        (Some(1_000_000 - HOT_WINDOW_MS), ms(100)),
        (Some(1_000_000 - HOT_WINDOW_MS - 1), ms(1000)),
        (Some(0), ms(1000)),
    ];
    for (at, want) in table {
        assert_eq!(ttl(&s, at.map(Instant), now), want, "{at:?}");
    }
    // A hot interval longer than the TTL changes nothing.
    let slow = Settings {
        pointer_hot_ms: 5000,
        ..s
    };
    assert_eq!(ttl(&slow, Some(Instant(999_000)), now), ms(1000));
}

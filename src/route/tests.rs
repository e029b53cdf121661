//! Unit tests of the router's structure and failover policies. Agreement with the real
//! client libraries is tested in `tests/placement.rs`.

use super::*;

fn servers(n: usize) -> Vec<ServerSpec> {
    (0..n)
        .map(|i| ServerSpec::parse(&format!("127.0.0.{}:{}", i + 1, 11211 + i)).unwrap())
        .collect()
}

fn keys() -> impl Iterator<Item = Vec<u8>> {
    (0..2000).map(|i| format!("key:{i}").into_bytes())
}

#[test]
fn names_round_trip() {
    for name in Distribution::NAMES {
        let d: Distribution = name.parse().unwrap();
        assert_eq!(d.name(), *name);
        assert_eq!(d.to_string(), *name);
    }
    assert_eq!(Distribution::all().len(), Distribution::NAMES.len());
    assert!("crc32".parse::<Distribution>().is_err());
    assert_eq!(
        "cmf-ketama:40".parse::<Distribution>().unwrap(),
        Distribution::CmfKetama { points: 40 }
    );
    assert!("cmf-ketama:x".parse::<Distribution>().is_err());
    let zero = "cmf-ketama:0"
        .parse::<Distribution>()
        .unwrap_err()
        .to_string();
    assert!(zero.contains("cache-memcached distribution"), "{zero}");
    assert!("cache-memcached:40".parse::<Distribution>().is_err());
    assert_eq!(
        Distribution::CmfKetama { points: 1 }.with_ketama_points(40),
        Distribution::CmfKetama { points: 40 }
    );
    assert!(Distribution::WhalinNative.sanitizes_keys_by_default());
    assert!(!Distribution::CacheMemcached.sanitizes_keys_by_default());
}

#[test]
fn router_is_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<Router>();
}

#[test]
fn every_profile_spreads_keys_and_survives_one_server() {
    for d in Distribution::all() {
        let r = Router::new(&d, &servers(5)).unwrap();
        let mut count = [0usize; 5];
        keys().for_each(|k| count[r.locate(&k)] += 1);
        assert!(count.iter().all(|&c| c > 100), "{d}: {count:?}");
        let one = Router::new(&d, &servers(1)).unwrap();
        assert!(keys().all(|k| one.locate(&k) == 0), "{d}");
    }
    assert!(Router::new(&Distribution::CacheMemcached, &[]).is_err());
}

#[test]
fn failover_policies() {
    for d in Distribution::all() {
        let r = Router::new(&d, &servers(5)).unwrap();
        let dead = 2;
        let alive = |i: usize| i != dead;
        for k in keys() {
            let home = r.locate(&k);
            let ff = r.locate_alive(&k, FailoverPolicy::FailFast, &alive);
            assert_eq!(ff, (home != dead).then_some(home), "{d}");
            for p in [FailoverPolicy::Rehash, FailoverPolicy::Eject] {
                let to = r.locate_alive(&k, p, &alive);
                if !d.failover_moves_keys() {
                    // libmemcached's modula: auto_eject moves no key (as fail-fast)
                    assert_eq!(to, ff, "{d} {p:?}");
                    continue;
                }
                let to = to.unwrap_or_else(|| panic!("{d} {p:?}: no server"));
                assert_ne!(to, dead, "{d} {p:?}");
                if home != dead
                    && ((p == FailoverPolicy::Rehash && d.has_legacy_rehash()) || is_consistent(&d))
                {
                    assert_eq!(to, home, "{d} {p:?}: a key on a live server moved");
                }
            }
        }
        assert_eq!(
            r.locate_alive(b"k", FailoverPolicy::Rehash, &|_| false),
            None
        );
        assert_eq!(
            r.locate_alive(b"k", FailoverPolicy::Eject, &|_| false),
            None
        );
    }
}

fn is_consistent(d: &Distribution) -> bool {
    !matches!(
        d,
        Distribution::CacheMemcached
            | Distribution::PythonMemcached
            | Distribution::LibmemcachedModula
            | Distribution::WhalinNative
            | Distribution::WhalinOldCompat
            | Distribution::WhalinNewCompat
            | Distribution::RustMemcache
    ) && !matches!(
        d,
        // The weighted MD5 continuums recount points per live server.
        Distribution::LibmemcachedKetamaWeighted
            | Distribution::TwemproxyKetama
            | Distribution::WhalinConsistent
    )
}

#[test]
fn eject_equals_a_router_without_the_dead_server() {
    for d in Distribution::all()
        .into_iter()
        .filter(|d| d.failover_moves_keys())
    {
        let all = servers(5);
        let r = Router::new(&d, &all).unwrap();
        let without: Vec<ServerSpec> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 3)
            .map(|(_, s)| s.clone())
            .collect();
        let small = Router::new(&d, &without).unwrap();
        for k in keys() {
            let got = r
                .locate_alive(&k, FailoverPolicy::Eject, &|i| i != 3)
                .unwrap();
            let want = small.locate(&k);
            assert_eq!(got, if want >= 3 { want + 1 } else { want }, "{d}");
        }
    }
}

#[test]
fn cache_memcached_rehash_is_its_tries_loop() {
    // Cache::Memcached: hv += crc15("1" . key) after the first dead server.
    let r = Router::new(&Distribution::CacheMemcached, &servers(3)).unwrap();
    let key = b"foo";
    let home = r.locate(key);
    let hv = hash::crc15(b"", key) + hash::crc15(b"1", key);
    let next = (hv % 3) as usize;
    if next != home {
        assert_eq!(
            r.locate_alive(key, FailoverPolicy::Rehash, &|i| i != home),
            Some(next)
        );
    }
}

#[test]
fn client_settings_parse_print_back_and_refuse_unknown_words() {
    for s in [
        "pylibmc:distribution=consistent",
        "pylibmc:ketama=1,hash=md5",
        "libmemcached:hash=md5,distribution=modula",
        "libmemcached:ketama_weighted=1,distribution=consistent_ketama_spy",
        "twemproxy:hash=fnv1a_64,distribution=ketama",
        "spymemcached:locator=array_mod,hash=native",
    ] {
        let d: Distribution = s.parse().unwrap();
        assert_eq!(d.to_string(), s);
        assert_eq!(d.to_string().parse::<Distribution>().unwrap(), d);
        // spymemcached has its own (FailureMode.Redistribute); the others eject.
        assert_eq!(d.has_legacy_rehash(), s.starts_with("spymemcached:"), "{s}");
    }
    // The C API's own spelling means the same.
    assert_eq!(
        "libmemcached:MEMCACHED_BEHAVIOR_HASH=MEMCACHED_HASH_MD5,MEMCACHED_BEHAVIOR_KETAMA=1"
            .parse::<Distribution>()
            .unwrap()
            .parts(),
        "libmemcached:hash=md5,ketama=1"
            .parse::<Distribution>()
            .unwrap()
            .parts()
    );
    // pylibmc's order is its own, not the order written; libmemcached's is the order written.
    let p = |s: &str| s.parse::<Distribution>().unwrap().parts();
    assert_eq!(
        p("pylibmc:hash=md5,ketama=1"),
        p("pylibmc:ketama=1,hash=md5")
    );
    assert_ne!(
        p("libmemcached:hash=md5,ketama=1"),
        p("libmemcached:ketama=1,hash=md5")
    );
    for (bad, want) in [
        ("libmemcached:hash=hsieh", "built without"),
        ("libmemcached:distribution=random", "not placement"),
        ("twemproxy:distribution=random", "not placement"),
        ("twemproxy:hash=crc16", "one_at_a_time"),
        ("spymemcached:hash=nope", "native"),
        ("pylibmc:ketama", "WORD=VALUE"),
        ("pylibmc:ketama=maybe", "true"),
        ("libmemcached:nope=1", "ketama_weighted"),
    ] {
        match bad.parse::<Distribution>() {
            Err(crate::Error::Config(m)) => assert!(m.contains(want), "{bad}: {m}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn spymemcached_redistribute_walks_its_locators_sequence() {
    // ArrayModNodeLocator: the servers after the primary, wrapping.
    let d: Distribution = "spymemcached:locator=array_mod,hash=native"
        .parse()
        .unwrap();
    let r = Router::new(&d, &servers(5)).unwrap();
    for k in keys() {
        let home = r.locate(&k);
        let dead = [home, (home + 1) % 5];
        let got = r.locate_alive(&k, FailoverPolicy::Rehash, &|i| !dead.contains(&i));
        assert_eq!(got, Some((home + 2) % 5));
        let live = (home + 1) % 5;
        assert_eq!(
            r.locate_alive(&k, FailoverPolicy::Rehash, &|i| i == live || i == home),
            Some(home)
        );
    }
    // KetamaIterator: hash += md5("<try>" + key), 7 nodes in all (the primary first).
    let r = Router::new(&Distribution::SpymemcachedKetama, &servers(3)).unwrap();
    let Table::Ketama { continuum, .. } = &r.table else {
        panic!("a continuum")
    };
    let (mut moved, mut none) = (0, 0);
    for k in keys() {
        let home = r.locate(&k);
        let mut h = hash::md5_hash(b"", &k);
        let mut want = None;
        for t in 0..7u32 {
            let s = continuum.find(h);
            if s != home {
                want = Some(s);
                break;
            }
            h = h.wrapping_add(hash::md5_hash(t.to_string().as_bytes(), &k));
        }
        let got = r.locate_alive(&k, FailoverPolicy::Rehash, &|i| i != home);
        assert_eq!(got, want);
        moved += usize::from(got.is_some());
        none += usize::from(got.is_none());
    }
    assert!(moved > 1900, "{moved} {none}");
}

#[test]
fn eject_moves_live_keys_only_where_the_table_without_the_dead_does() {
    // `Router::ejects` says when every key (not only the dead server's) must be placed
    // through `locate_alive`; the client test is tests/failover_in_call.rs.
    let r = Router::new(&Distribution::LibmemcachedKetama, &servers(3)).unwrap();
    assert!(r.ejects(FailoverPolicy::Eject));
    assert!(r.ejects(FailoverPolicy::Rehash));
    assert!(!r.ejects(FailoverPolicy::FailFast));
    // libmemcached's modula moves no key (`libmemcached_modula_ejects_no_key`).
    let r = Router::new(&Distribution::LibmemcachedModula, &servers(3)).unwrap();
    assert!(!r.ejects(FailoverPolicy::Eject));
    let r = Router::new(&Distribution::CacheMemcached, &servers(3)).unwrap();
    assert!(r.ejects(FailoverPolicy::Eject));
    assert!(!r.ejects(FailoverPolicy::Rehash));
    let r = Router::new(&Distribution::SpymemcachedKetama, &servers(3)).unwrap();
    assert!(!r.ejects(FailoverPolicy::Rehash));
    let r = Router::new(&Distribution::ProxyPool, &servers(3)).unwrap();
    assert!(!r.ejects(FailoverPolicy::Eject));
}

#[test]
fn libmemcached_modula_ejects_no_key() {
    // libmemcached 1.1.4 rebuilds only a continuum when it ejects a server: under modula a
    // dead server's keys fail (SERVER_MARKED_DEAD), measured with pylibmc 1.6.3
    // (remove_failed=1); under ketama they move. Every other key stays where it is.
    let modula: Vec<Distribution> = vec![
        Distribution::LibmemcachedModula,
        "pylibmc:distribution=modula,hash=default".parse().unwrap(),
        "pylibmc:hash=md5".parse().unwrap(),
        "libmemcached:ketama=1,distribution=modula".parse().unwrap(),
    ];
    let moving: Vec<Distribution> = vec![
        Distribution::LibmemcachedKetama,
        "pylibmc:ketama=1".parse().unwrap(),
        "libmemcached:distribution=modula,ketama=1".parse().unwrap(),
    ];
    for d in &modula {
        assert!(!d.failover_moves_keys(), "{d}");
        let r = Router::new(d, &servers(3)).unwrap();
        for k in keys() {
            let home = r.locate(&k);
            for p in [FailoverPolicy::Rehash, FailoverPolicy::Eject] {
                let to = r.locate_alive(&k, p, &|i| i != 1);
                assert_eq!(to, (home != 1).then_some(home), "{d} {p:?}");
            }
        }
    }
    for d in &moving {
        assert!(d.failover_moves_keys(), "{d}");
        let r = Router::new(d, &servers(3)).unwrap();
        let moved = keys()
            .filter(|k| r.locate(k) == 1)
            .filter(|k| {
                r.locate_alive(k, FailoverPolicy::Eject, &|i| i != 1)
                    .is_some()
            })
            .count();
        assert!(moved > 0, "{d}");
    }
}

fn weighted(ws: &[u32]) -> Vec<ServerSpec> {
    servers(ws.len())
        .into_iter()
        .zip(ws)
        .map(|(mut s, &w)| {
            s.weight = w;
            s
        })
        .collect()
}

fn placements(d: &str, servers: &[ServerSpec]) -> Vec<usize> {
    let d: Distribution = d.parse().unwrap();
    let r = Router::new(&d, servers).unwrap();
    keys().map(|k| r.locate(&k)).collect()
}

#[test]
fn pylibmc_behaviors_set_after_the_servers_are_libmemcached_calls_in_order() {
    // pylibmc's set_behaviors on a client that has its servers is libmemcached's
    // memcached_behavior_set after memcached_server_add: weights count only when the
    // distribution was consistent when the servers were added.
    let w = weighted(&[1, 2, 1]);
    let s = servers(3);
    let same = |a: &str, b: &str, servers: &[ServerSpec]| {
        assert_eq!(placements(a, servers), placements(b, servers), "{a} vs {b}");
    };
    let differ = |a: &str, b: &str, servers: &[ServerSpec]| {
        assert_ne!(placements(a, servers), placements(b, servers), "{a} vs {b}");
    };
    // ketama set afterwards: the unweighted continuum, whatever the weights
    same("pylibmc:;ketama=1", "libmemcached:ketama=1", &w);
    differ("pylibmc:;ketama=1", "pylibmc:ketama=1", &w);
    same("pylibmc:;ketama=1", "pylibmc:ketama=1", &s);
    // ketama, then (a later call) hash=md5: points stay one-at-a-time
    same(
        "pylibmc:;ketama=1;hash=md5",
        "libmemcached:ketama=1,hash=md5",
        &s,
    );
    differ(
        "pylibmc:;ketama=1;hash=md5",
        "pylibmc:ketama=1,hash=md5",
        &s,
    );
    // both in one call: pylibmc's order (hash first) whatever the text's
    same(
        "pylibmc:;ketama=1,hash=md5",
        "libmemcached:hash=md5,ketama=1",
        &s,
    );
    // the constructor's consistent distribution with a weight above 1 turned weighting
    // on when the servers were added; a later hash change keeps it (and MD5 points)
    same(
        "pylibmc:ketama=1;hash=crc",
        "libmemcached:ketama_weighted=1,hash=crc",
        &w,
    );
    // ... and a later spy distribution keeps it too, while a later ketama turns it off
    same(
        "pylibmc:ketama=1;distribution=consistent_ketama_spy",
        "libmemcached:ketama_weighted=1,hash=default,distribution=consistent_ketama_spy",
        &w,
    );
    same("pylibmc:ketama=1;ketama=1", "libmemcached:ketama=1", &w);
    // an empty later group changes nothing; the text keeps the groups
    let d: Distribution = "pylibmc:Ketama=1;;HASH=MD5".parse().unwrap();
    assert_eq!(d.to_string(), "pylibmc:ketama=1;;hash=md5");
    assert_eq!(d.to_string().parse::<Distribution>().unwrap(), d);
    // a word twice in one call is refused; in two calls it is a sequence
    assert!("pylibmc:hash=md5,hash=crc".parse::<Distribution>().is_err());
    assert!("pylibmc:hash=md5;hash=crc".parse::<Distribution>().is_ok());
    // `;` is pylibmc's groups, or libmemcached's one BEFORE;AFTER the servers are added
    for bad in [
        "libmemcached:ketama=1;hash=md5;hash=crc",
        "twemproxy:hash=md5;distribution=ketama",
    ] {
        let e = bad.parse::<Distribution>().unwrap_err().to_string();
        assert!(e.contains("set_behaviors"), "{e}");
    }
    // libmemcached BEFORE;AFTER: ketama before the servers counts weights (the servers were
    // added to a continuum), as pylibmc's constructor behaviors do; after them it does not
    same("libmemcached:ketama=1;", "pylibmc:ketama=1", &w);
    same("libmemcached:;ketama=1", "libmemcached:ketama=1", &w);
    // an empty BEFORE group is written as the AFTER group alone (retest26 7: a message
    // named the placement `libmemcached:;`); an empty AFTER group is kept, it means
    // something
    for (given, text) in [
        ("libmemcached:;", "libmemcached:"),
        ("libmemcached:;ketama=1", "libmemcached:ketama=1"),
        ("libmemcached:ketama=1;", "libmemcached:ketama=1;"),
    ] {
        let d: Distribution = given.parse().unwrap();
        assert_eq!(d.to_string(), text, "{given}");
        assert_eq!(text.parse::<Distribution>().unwrap(), d, "{given}");
    }
}

#[test]
fn unweighted_libmemcached_profiles_refuse_a_weight_above_one() {
    // libmemcached-ketama(-spy) is libmemcached's unweighted continuum; pylibmc's
    // {"ketama": True} (behaviors before servers) counts weights. A weight above 1 is
    // refused, naming the settings that say which is meant, never silently ignored.
    for d in [
        Distribution::LibmemcachedKetama,
        Distribution::LibmemcachedKetamaSpy,
    ] {
        let e = Router::new(&d, &weighted(&[1, 2, 1]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("pylibmc:") && e.contains("libmemcached:"), "{e}");
        assert!(e.contains("weight 2"), "{e}");
        Router::new(&d, &weighted(&[1, 1, 1])).unwrap();
    }
    // the clients with no weights at all (tester finding retest31 6: dropped unseen)
    for d in [
        Distribution::PymemcacheRendezvous,
        Distribution::RustMemcache,
    ] {
        let e = Router::new(&d, &weighted(&[1, 2, 1]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("weight 2") && e.contains("takes no weights"),
            "{e}"
        );
        Router::new(&d, &weighted(&[1, 1, 1])).unwrap();
    }
    // the profiles that say what they do with weights keep taking them
    for d in [
        "libmemcached-modula",
        "libmemcached-ketama-weighted",
        "pylibmc:ketama=1",
    ] {
        Router::new(&d.parse().unwrap(), &weighted(&[1, 2, 1])).unwrap();
    }
}

#[test]
fn sort_hosts_orders_the_servers_by_host_then_port() {
    // libmemcached's SORT_HOSTS sorts its list in place (`compare_servers`: strcmp of the
    // host, then the port); modula's buckets follow. Once sorted it stays sorted.
    let listed: Vec<ServerSpec> = ["10.0.0.2:11211", "10.0.0.1:11300", "10.0.0.1:11299"]
        .iter()
        .map(|s| ServerSpec::parse(s).unwrap())
        .collect();
    let sorted: Vec<ServerSpec> = [2, 1, 0].iter().map(|&i| listed[i].clone()).collect();
    let addr = |servers: &[ServerSpec], d: &str| -> Vec<String> {
        let r = Router::new(&d.parse().unwrap(), servers).unwrap();
        keys()
            .map(|k| servers[r.locate(&k)].addr.to_string())
            .collect()
    };
    for d in [
        "pylibmc:sort_hosts=1",
        "pylibmc:;sort_hosts=1",
        "pylibmc:sort_hosts=1;sort_hosts=0",
        "libmemcached:sort_hosts=1,sort_hosts=0",
        "pylibmc:_sort_hosts=1,hash=md5",
    ] {
        let base = if d.contains("md5") {
            "libmemcached:hash=md5"
        } else {
            "libmemcached:"
        };
        assert_eq!(addr(&listed, d), addr(&sorted, base), "{d}");
        assert_ne!(addr(&listed, d), addr(&listed, base), "{d}");
    }
    // set off before the servers are added: never sorted
    assert_eq!(
        addr(&listed, "pylibmc:sort_hosts=0"),
        addr(&listed, "libmemcached:")
    );
}

/// A server name only where a placement reads it (twemproxy's, proxy-pool): under any other
/// it changes nothing and is most likely a mistyped weight (`host:port:2x`): refused, naming
/// the entry (tester finding addresses 2: 253 of 500 keys moved under cache-memcached).
#[test]
fn a_server_name_no_placement_reads_is_refused() {
    let named = vec![
        ServerSpec::parse_entry("127.0.0.1:11211:2x", None).unwrap(),
        ServerSpec::parse("127.0.0.1:11212").unwrap(),
    ];
    for d in [
        Distribution::CacheMemcached,
        Distribution::LibmemcachedKetamaWeighted,
        Distribution::SpymemcachedKetama,
        Distribution::CmfKetama { points: 150 },
        Distribution::PymemcacheRendezvous,
    ] {
        let e = Router::new(&d, &named).expect_err("refused");
        let msg = e.to_string();
        assert!(
            msg.contains("127.0.0.1:11211") && msg.contains("\"2x\"") && msg.contains(d.name()),
            "{msg}"
        );
    }
    let setting: Distribution = "twemproxy:hash=fnv1a_64,distribution=ketama"
        .parse()
        .unwrap();
    for d in [
        Distribution::TwemproxyKetama,
        Distribution::ProxyPool,
        setting,
    ] {
        assert!(Router::new(&d, &named).is_ok(), "{d}");
    }
    let weighted = vec![
        ServerSpec::parse_entry("127.0.0.1:11211:2", None).unwrap(),
        ServerSpec::parse("127.0.0.1:11212").unwrap(),
    ];
    assert!(Router::new(&Distribution::CacheMemcached, &weighted).is_ok());
}

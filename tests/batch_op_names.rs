//! A batch of store commands is named by its command in its per-operation records
//! (`add_multi`, `replace_multi`, `append_multi`, `prepend_multi`, `cas_multi`), so a tracer
//! tells them from `set_multi` (they were all `set_multi`; tester finding retest12 3).
//! Against a real memcached, every protocol.
mod common;

use common::{unique, Memcached};
use mcpool::trace::Op;
use mcpool::{Client, Protocol, SetItem, StoreCommand};
use std::sync::{Arc, Mutex};

#[test]
fn each_store_batch_is_named_by_its_command() {
    let mc = Memcached::start(&[]);
    for protocol in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let ops: Arc<Mutex<Vec<Op>>> = Arc::default();
        let seen = ops.clone();
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(protocol)
            .on_operation(move |r| seen.lock().unwrap().push(r.op))
            .build()
            .unwrap();
        let k = unique("names");
        let (a, b) = (format!("{k}a"), format!("{k}b"));
        let items = |v: &'static str| vec![SetItem::new(&a, v, 0), SetItem::new(&b, v, 0)];
        let mut expected = Vec::new();
        for (cmd, op) in [
            (StoreCommand::Set, Op::SetMulti),
            (StoreCommand::Add, Op::AddMulti),
            (StoreCommand::Replace, Op::ReplaceMulti),
            (StoreCommand::Append, Op::AppendMulti),
            (StoreCommand::Prepend, Op::PrependMulti),
        ] {
            let got = c.store_multi_items(cmd, &items("v"));
            assert!(
                got.iter().all(Result::is_ok),
                "{protocol:?} {cmd:?}: {got:?}"
            );
            expected.push(op);
        }
        let mut cas_items = items("w");
        for it in &mut cas_items {
            it.cas = c.gets(it.key).unwrap().unwrap().cas.unwrap();
        }
        expected.extend([Op::Gets, Op::Gets]);
        let got = c.store_multi_items(StoreCommand::Cas(0), &cas_items);
        assert!(got.iter().all(Result::is_ok), "{protocol:?} cas: {got:?}");
        expected.push(Op::CasMulti);
        c.set_multi(&[(&a, "x")], 0);
        expected.push(Op::SetMulti);
        assert_eq!(*ops.lock().unwrap(), expected, "{protocol:?}");
        let names: Vec<&str> = expected.iter().map(|o| o.name()).collect();
        assert!(
            names.contains(&"add_multi") && names.contains(&"cas_multi"),
            "{names:?}"
        );
    }
}

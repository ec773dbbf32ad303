//! The parser as a whole, on the strings python-blosc2 4.14.1 writes into
//! b2nd metalayers (each with the typesize it gave the frame), and on any
//! string at all.

use proptest::prelude::*;

use super::*;

fn parse(text: &str) -> NumpyDtype {
    NumpyDtype::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn record(text: &str) -> Record {
    match parse(text) {
        NumpyDtype::Record(r) => r,
        other => panic!("{text}: {other:?}"),
    }
}

/// Field names and offsets.
fn layout(r: &Record) -> Vec<(&str, u64)> {
    r.fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset))
        .collect()
}

/// `blosc2.zeros((3,), dtype=...).schunk.meta['b2nd'][-1]` and the
/// array's typesize, for each kind of dtype.
#[test]
fn what_python_blosc2_writes() {
    for (text, typesize) in [
        ("<f4", 4),
        (">f8", 8),
        ("|b1", 1),
        ("<M8[ns]", 8),
        (">M8[s]", 8),
        ("<m8[us]", 8),
        ("<M8", 8),
        ("<M8[2s]", 8),
        ("<M8[D]", 8),
        ("<U8", 32),
        (">U3", 12),
        ("|S5", 5),
        ("|V16", 16),
        ("<c8", 8),
        ("<c16", 16),
        ("<f2", 2),
        ("<i8", 8),
        ("|i1", 1),
        ("|u1", 1),
        ("[('a', '<i4'), ('b', '<f8')]", 12),
        ("[('a', '<i4'), ('b', [('x', '<f4'), ('y', '>i2')])]", 10),
        ("[('a', '<i4'), ('b', '<f8', (2, 3))]", 52),
        (
            "{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [0, 8], 'itemsize': 16}",
            16,
        ),
        (
            "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 4], 'itemsize': 8, 'aligned': True}",
            8,
        ),
        ("[(('title', 'a'), '<i4'), ('b', '<f8')]", 12),
        ("[('a', '<M8[ns]'), ('s', '<U3')]", 20),
        ("('<i4', (2,))", 8),
        ("[('a', 'O')]", 8),
        ("[('id', '<i8'), ('name', 'S284'), ('v', '<f8')]", 300),
        ("[('a', '>U2'), ('b', '?'), ('c', 'O'), ('d', '<M8[ns]'), ('e', 'V3'), ('f', 'i1')]", 29),
        ("[('a', '<i4', (2,)), ('b', ('<f8', (3,)), (2,))]", 56),
        ("[(\"it's\", '<i4'), ('x\"y\\'', 'u1')]", 5),
    ] {
        assert_eq!(parse(text).itemsize(), typesize, "{text}");
    }
}

#[test]
fn plain_dtypes_are_scalars() {
    let s = *parse("<M8[ns]").as_scalar().unwrap();
    assert_eq!(
        s,
        Scalar {
            kind: ItemKind::Datetime,
            size: 8,
            order: ByteOrder::Little,
            unit: Some(TimeUnit {
                count: 1,
                base: TimeBase::Nano
            }),
        }
    );
    let s = *parse(">U3").as_scalar().unwrap();
    assert_eq!(
        (s.kind, s.size, s.order),
        (ItemKind::Unicode, 12, ByteOrder::Big)
    );
    assert!(parse("|b1").as_scalar().unwrap().is_numeric());
    assert!(!parse("|S1").as_scalar().unwrap().is_numeric());
    assert!(parse("[]").as_scalar().is_none());
}

#[test]
fn records_place_their_fields() {
    let r = record("[('a', '<i4'), ('b', '>f8'), ('c', '|u1', (2,))]");
    assert_eq!((r.itemsize, r.form), (14, RecordForm::List));
    assert_eq!(layout(&r), [("a", 0), ("b", 4), ("c", 12)]);
    assert_eq!(r.fields[1].dtype.as_scalar().unwrap().order, ByteOrder::Big);
    assert_eq!(r.fields[2].spelled.as_deref(), Some("|u1"));
    let NumpyDtype::Subarray(c) = &r.fields[2].dtype else {
        panic!()
    };
    assert_eq!((c.shape.as_slice(), c.base.itemsize()), (&[2][..], 1));

    // Nested records are records of their own, placed like any field.
    let r = record("[('a', '<i4'), ('b', [('x', '<f4'), ('y', '>i2')]), ('c', 'S3')]");
    assert_eq!(layout(&r), [("a", 0), ("b", 4), ("c", 10)]);
    let inner = r.fields[1].dtype.as_record().unwrap();
    assert_eq!(layout(inner), [("x", 0), ("y", 4)]);
    assert_eq!(r.fields[1].spelled, None);

    // Titles, names with quotes, trailing commas, an empty record.
    let r = record("[(('title', 'a'), '<i4'), (\"it's\", 'S2'),]");
    assert_eq!(r.fields[0].title.as_deref(), Some("title"));
    assert_eq!(layout(&r), [("a", 0), ("it's", 4)]);
    assert_eq!(record("[]").itemsize, 0);

    // A dict places its fields and may be longer than them.
    let r = record(
        "{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [8, 0], 'titles': ['T', None], 'itemsize': 24}",
    );
    assert_eq!((r.itemsize, r.form), (24, RecordForm::Dict));
    assert_eq!(layout(&r), [("a", 8), ("b", 0)]);
    assert_eq!(
        (r.fields[0].title.as_deref(), r.fields[1].title.as_deref()),
        (Some("T"), None)
    );
    let packed = record("{'names': ['a', 'b'], 'formats': ['<i4', [('x', 'u1')]]}");
    assert_eq!(
        (layout(&packed), packed.itemsize),
        (vec![("a", 0), ("b", 4)], 5)
    );

    // A subarray dtype: its base and shape; an empty shape is the base.
    let NumpyDtype::Subarray(s) = parse("('<i4', (2, 3))") else {
        panic!()
    };
    assert_eq!((s.shape, s.base.itemsize()), (vec![2, 3], 4));
    assert_eq!(parse("('<i4', ())"), parse("<i4"));
    assert_eq!(parse("('<i4', 3)").itemsize(), 12);
}

#[test]
fn malformed_records_are_refused() {
    for bad in [
        "[",
        "[('a')]",
        "[('a', '<i4', (2,), 1)]",
        "[('a', '<i3')]",
        "[('a', 7)]",
        "[(1, '<i4')]",
        "[('a', '<i4'), ('a', '<f8')]",
        "[(('a', 'a'), '<i4')]",
        "[(('t', 'a'), '<i4'), ('t', 'u1')]",
        "[['a', '<i4']]",
        "[('a', '<i4', (-1,))]",
        "[('a', '<i4', ('2',))]",
        "[('a', '|S2147483647'), ('b', 'u1')]",
        "[('a', '<f8', (1 << 30,))]",
        "[('a', '<f8', (268435456,))]",
        "('<i4',)",
        "('<i4', (2,), 1)",
        "{'names': ['a'], 'formats': ['<i4', '<f8']}",
        "{'names': ['a']}",
        "{'names': ['a'], 'formats': ['<i4'], 'offsets': [0], 'itemsize': 2}",
        "{'names': ['a'], 'formats': ['<i4'], 'offsets': ['0']}",
        "{'names': ['a'], 'formats': ['<i4'], 'aligned': True}",
        "{'names': ['a'], 'formats': ['<i4'], 'names': ['b']}",
        "{'names': ['a'], 'formats': ['<i4'], 'colour': 'red'}",
        "{'names': ['a', 'a'], 'formats': ['<i4', '<i4']}",
        "{'names': ['a'], 'formats': ['<i4'], 'itemsize': True}",
        "{'names': ['a'], 'formats': ['<i4'], 'offsets': [2147483645]}",
        "{1: 2}",
        " [('a', '<i4')]",
        "'<i4'",
        "7",
    ] {
        assert!(NumpyDtype::parse(bad).is_err(), "{bad:?}");
    }
    let deep = "[('a', ".repeat(40) + "'<i4'" + &")]".repeat(40);
    assert!(NumpyDtype::parse(&deep).is_err(), "too deep");
    let ok = "[('a', ".repeat(10) + "'<i4'" + &")]".repeat(10);
    assert_eq!(parse(&ok).itemsize(), 4);
    // Trailing whitespace, as a b2nd writer might leave it, is no token.
    assert_eq!(parse("[('a', '<i4')] \n").itemsize(), 4);
}

/// Strings built from the grammar's own pieces, to reach past the first
/// character more often than random text does.
fn dtype_like() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        ",",
        " ",
        "'",
        "\"",
        "\\",
        ":",
        "'a'",
        "'<i4'",
        "'S3'",
        "<f8",
        "|",
        "M8[",
        "ns",
        "]",
        "2",
        "0",
        "True",
        "None",
        "'names'",
        "'formats'",
        "'offsets'",
        "'itemsize'",
        "é",
        "\\x",
        "\\u",
        "(2,)",
        "U",
        "99999999999",
    ]);
    prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
}

proptest! {
    #[test]
    fn never_panics_on_any_string(text in ".{0,64}") {
        let _ = NumpyDtype::parse(&text);
    }

    #[test]
    fn never_panics_on_dtype_like_strings(text in dtype_like()) {
        if let Ok(d) = NumpyDtype::parse(&text) {
            prop_assert!(d.itemsize() <= MAX_ITEMSIZE);
        }
    }
}

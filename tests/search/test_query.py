from apps.search.query import Unit, parse


def test_plain_words_become_or_terms_without_stopwords():
    assert parse("What did Caroline say about painting?") == [
        Unit("term", ("caroline",)),
        Unit("term", ("say",)),
        Unit("term", ("painting",)),
    ]


def test_phrases_and_prefixes():
    assert parse('"the weekly review" deploy* cat') == [
        Unit("phrase", ("the", "weekly", "review")),
        Unit("prefix", ("deploy",)),
        Unit("term", ("cat",)),
    ]


def test_fts_syntax_is_only_separators_or_words():
    assert parse("cat\" ' * : & | ! ( NEAR AND - dog") == [
        Unit("term", ("cat",)),
        Unit("term", ("dog",)),
    ]


def test_only_stopwords_are_kept_when_nothing_else_is_left():
    assert parse("what is it") == [
        Unit("term", ("what",)),
        Unit("term", ("is",)),
        Unit("term", ("it",)),
    ]


def test_unicode_words_and_emoji():
    assert parse("café 🙂 naïve straße") == [
        Unit("term", ("café",)),
        Unit("term", ("naïve",)),
        Unit("term", ("straße",)),
    ]
    assert parse("🙂🙂") == []


def test_duplicates_are_dropped():
    assert parse("cat cat CAT") == [Unit("term", ("cat",))]

from ragwright.model.identity import Identity, normalize_acl


def test_visibility_rules() -> None:
    ident = Identity("acme", groups=("hr", "hr", " eng "))
    assert ident.groups == ("eng", "hr")
    assert ident.can_see("acme", ("hr",))
    assert ident.can_see("acme", ("*",))
    assert not ident.can_see("globex", ("*",))
    assert not ident.can_see("acme", ())
    assert not ident.can_see("acme", ("finance",))


def test_acl_signature_differs_by_groups_and_tenant() -> None:
    assert Identity("a").acl_signature() != Identity("b").acl_signature()
    assert Identity("a", ("x",)).acl_signature() != Identity("a").acl_signature()
    assert Identity("a", ("x", "y")).acl_signature() == Identity("a", ("y", "x")).acl_signature()
    assert normalize_acl(None) == ("*",)

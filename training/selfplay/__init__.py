"""Policy iteration with search (Lockhart et al.): the actor that plays self-play auctions with the
current network and the search, and the `selfplay:` params every stage of the loop reads."""

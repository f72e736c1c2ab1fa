//! node_selector

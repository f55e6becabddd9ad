"""The Timeline tab's view model: series, threshold lines, marks and the what-if replay, without Qt."""

#pragma once

// The web pages' one stylesheet (served as /style.css, so that the Content-Security-Policy can
// forbid inline styles and scripts). Mobile first: below 700 px wide, tables of class "cards"
// become one card per row, each cell labelled by its data-label attribute, so that no page needs
// horizontal scrolling on a phone except the timeline picture.

namespace boardlab::server::web {

extern const char kStyleSheet[];

/// The pages' icon (/favicon.svg): a board with a chip, in the header's colours.
extern const char kFavicon[];

}  // namespace boardlab::server::web

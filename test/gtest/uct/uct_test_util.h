/*
 * What tests of the UCT API share: a component found by its name in the
 * public list.
 */
#ifndef UCT_TEST_UTIL_H_
#define UCT_TEST_UTIL_H_

#include <uct/api/uct.h>

#include <gtest/gtest.h>

#include <string>

namespace ucs {

/** The component named @a name in uct_query_components()'s list, or NULL
 *  (a test that needs it fails on its first use) */
inline uct_component_h find_component(const std::string &name)
{
    uct_component_h *components;
    unsigned num_components;
    uct_component_h found = nullptr;

    EXPECT_EQ(UCS_OK, uct_query_components(&components, &num_components));
    for (unsigned i = 0; i < num_components; ++i) {
        uct_component_attr_t attr = {};

        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        EXPECT_EQ(UCS_OK, uct_component_query(components[i], &attr));
        if (name == attr.name) {
            found = components[i];
        }
    }
    uct_release_component_list(components);
    return found;
}

} // namespace ucs

#endif

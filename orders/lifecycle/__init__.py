"""An order's transitions, changes, fencing and ids; imports only orders.models, orders.stores."""

"""Collision detection, as MuJoCo's engine_collision_*.c.

- `driver`: mj_collision: the broadphase (body pairs by their bounding boxes), the filters,
  the narrowphase dispatch through `table`, and writing contacts.
- `table`: which collider handles a pair of geom types (MuJoCo's mjCOLLISIONFUNC) and how many
  contacts it may return (mj_maxContact); the driver and the distance query both read it.
- `primitive`: the analytic colliders (engine_collision_primitive.c, engine_collision_box.c).
- `work`: the layout of the general colliders' work buffers and of a GJK object row.
- `support`: the support functions of the convex geoms and the small vector helpers.
- `gjk`: GJK, the EPA start polytope and EPA (engine_collision_gjk.c).
- `distance`: mj_geomDistance, the collision sensors' query.
- `convex`: mjc_Convex: objects, GJK/EPA penetration and distance, meshes and flex elements.
- `multicontact`: the single-shot multicontact of box, cylinder and mesh faces.
- `plane`: mjc_PlaneConvex for ellipsoids, cylinders and meshes.
- `libccd`: libccd's MPR, used when native CCD is disabled and for height-field prisms.
- `hfield`: mjc_ConvexHField; `sdf`: SDF plugins and mjc_SDF; `flex`: flex collisions, with
  `flex_mid` the midphase of their element pairs.
"""

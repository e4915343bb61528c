//! The message definitions syncline ships: the header-first types robot
//! pipelines carry most (`sensor_msgs` Imu, Image, CameraInfo, PointCloud2,
//! LaserScan, NavSatFix; the `geometry_msgs` *Stamped types;
//! `nav_msgs/Odometry`), and the types they use. Comments, constants and
//! default values are left out: they do not enter the type hash, and a
//! schema without them decodes the same bytes.

/// `(full type name, .msg text)` of every shipped definition.
pub(crate) const DEFINITIONS: &[(&str, &str)] = &[
    ("builtin_interfaces/msg/Time", "int32 sec\nuint32 nanosec\n"),
    (
        "builtin_interfaces/msg/Duration",
        "int32 sec\nuint32 nanosec\n",
    ),
    (
        "std_msgs/msg/Header",
        "builtin_interfaces/Time stamp\nstring frame_id\n",
    ),
    ("std_msgs/msg/String", "string data\n"),
    (
        "geometry_msgs/msg/Vector3",
        "float64 x\nfloat64 y\nfloat64 z\n",
    ),
    (
        "geometry_msgs/msg/Point",
        "float64 x\nfloat64 y\nfloat64 z\n",
    ),
    (
        "geometry_msgs/msg/Quaternion",
        "float64 x\nfloat64 y\nfloat64 z\nfloat64 w\n",
    ),
    (
        "geometry_msgs/msg/Pose",
        "Point position\nQuaternion orientation\n",
    ),
    (
        "geometry_msgs/msg/PoseWithCovariance",
        "Pose pose\nfloat64[36] covariance\n",
    ),
    (
        "geometry_msgs/msg/Twist",
        "Vector3 linear\nVector3 angular\n",
    ),
    (
        "geometry_msgs/msg/TwistWithCovariance",
        "Twist twist\nfloat64[36] covariance\n",
    ),
    (
        "geometry_msgs/msg/Accel",
        "Vector3 linear\nVector3 angular\n",
    ),
    (
        "geometry_msgs/msg/Wrench",
        "Vector3 force\nVector3 torque\n",
    ),
    (
        "geometry_msgs/msg/Transform",
        "Vector3 translation\nQuaternion rotation\n",
    ),
    (
        "geometry_msgs/msg/PointStamped",
        "std_msgs/Header header\nPoint point\n",
    ),
    (
        "geometry_msgs/msg/PoseStamped",
        "std_msgs/Header header\nPose pose\n",
    ),
    (
        "geometry_msgs/msg/TwistStamped",
        "std_msgs/Header header\nTwist twist\n",
    ),
    (
        "geometry_msgs/msg/Vector3Stamped",
        "std_msgs/Header header\nVector3 vector\n",
    ),
    (
        "geometry_msgs/msg/QuaternionStamped",
        "std_msgs/Header header\nQuaternion quaternion\n",
    ),
    (
        "geometry_msgs/msg/AccelStamped",
        "std_msgs/Header header\nAccel accel\n",
    ),
    (
        "geometry_msgs/msg/WrenchStamped",
        "std_msgs/Header header\nWrench wrench\n",
    ),
    (
        "geometry_msgs/msg/TransformStamped",
        "std_msgs/Header header\nstring child_frame_id\nTransform transform\n",
    ),
    (
        "geometry_msgs/msg/PoseWithCovarianceStamped",
        "std_msgs/Header header\nPoseWithCovariance pose\n",
    ),
    (
        "geometry_msgs/msg/TwistWithCovarianceStamped",
        "std_msgs/Header header\nTwistWithCovariance twist\n",
    ),
    (
        "nav_msgs/msg/Odometry",
        "std_msgs/Header header\nstring child_frame_id\n\
         geometry_msgs/PoseWithCovariance pose\ngeometry_msgs/TwistWithCovariance twist\n",
    ),
    (
        "sensor_msgs/msg/Imu",
        "std_msgs/Header header\n\
         geometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\n\
         geometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\n\
         geometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n",
    ),
    (
        "sensor_msgs/msg/Image",
        "std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\n\
         uint8 is_bigendian\nuint32 step\nuint8[] data\n",
    ),
    (
        "sensor_msgs/msg/RegionOfInterest",
        "uint32 x_offset\nuint32 y_offset\nuint32 height\nuint32 width\nbool do_rectify\n",
    ),
    (
        "sensor_msgs/msg/CameraInfo",
        "std_msgs/Header header\nuint32 height\nuint32 width\nstring distortion_model\n\
         float64[] d\nfloat64[9] k\nfloat64[9] r\nfloat64[12] p\n\
         uint32 binning_x\nuint32 binning_y\nRegionOfInterest roi\n",
    ),
    (
        "sensor_msgs/msg/PointField",
        "string name\nuint32 offset\nuint8 datatype\nuint32 count\n",
    ),
    (
        "sensor_msgs/msg/PointCloud2",
        "std_msgs/Header header\nuint32 height\nuint32 width\nPointField[] fields\n\
         bool is_bigendian\nuint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense\n",
    ),
    (
        "sensor_msgs/msg/LaserScan",
        "std_msgs/Header header\nfloat32 angle_min\nfloat32 angle_max\n\
         float32 angle_increment\nfloat32 time_increment\nfloat32 scan_time\n\
         float32 range_min\nfloat32 range_max\nfloat32[] ranges\nfloat32[] intensities\n",
    ),
    (
        "sensor_msgs/msg/NavSatStatus",
        "int8 status\nuint16 service\n",
    ),
    (
        "sensor_msgs/msg/NavSatFix",
        "std_msgs/Header header\nNavSatStatus status\nfloat64 latitude\nfloat64 longitude\n\
         float64 altitude\nfloat64[9] position_covariance\nuint8 position_covariance_type\n",
    ),
];
